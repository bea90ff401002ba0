#!/usr/bin/env bash
# Prepares this checkout to run: system GL libraries (Mesa EGL/llvmpipe, Xvfb), Debian's
# chromium and chromedriver (the notebook's browser test) and a virtual environment in
# .venv with the engine and its extras (dev brings the notebook and distributed extras).
# Safe to run repeatedly: packages are reinstalled only when pyproject.toml or the
# extras change.
#
# Numba (the CPU backend) is a plain dependency. The GPU *runtime* extra (CuPy) is
# installed only where a CUDA driver is present (nvidia-smi reports a CUDA version);
# elsewhere the script says how to add it. The CUDA major (docs/gpu.md) is the driver's,
# else the CUDA toolkit's (nvcc), else FRUSTUM_CUDA_MAJOR (default 13, the GPU
# machine's): CUDA 13 -> gpu-cuda13 (cupy-cuda13x, NVRTC 13.0), CUDA 12 -> gpu. The NVRTC
# compiler the tests compile every kernel with is in the development extra of the same
# major (dev, or dev-cuda12), so CI compiles every kernel without the GPU runtime.
# A CuPy wheel of the other major is uninstalled first: two side by side break the import.
# FRUSTUM_EXTRAS overrides the extras (e.g. FRUSTUM_EXTRAS=dev,gpu-cuda13); an extra
# pyproject.toml does not have stops the script (exit 2) before anything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

GL_PACKAGES="xvfb xauth libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri"
# The notebook's real-browser test drives Debian's headless chromium through its
# chromedriver (tests/notebook/test_nb_browser.py); no browser is ever downloaded.
BROWSER_PACKAGES="chromium chromium-driver"
VENV_PACKAGE="python3-venv"

driver_major() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\)\..*/\1/p' | head -n1
  fi
}
cuda_major() {
  local v="$1"
  if [ -z "$v" ] && command -v nvcc >/dev/null 2>&1; then
    v="$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p' | head -n1)"
  fi
  echo "${v:-${FRUSTUM_CUDA_MAJOR:-13}}"
}
DRIVER_MAJOR="$(driver_major)"
CUDA_MAJOR="$(cuda_major "$DRIVER_MAJOR")"
if [ "$CUDA_MAJOR" -ge 13 ]; then
  GPU_EXTRA="gpu-cuda13"; DEV_EXTRA="dev"; OTHER_CUPY="cupy-cuda12x nvidia-cuda-nvrtc-cu12"
else
  GPU_EXTRA="gpu"; DEV_EXTRA="dev-cuda12"; OTHER_CUPY="cupy-cuda13x nvidia-cuda-nvrtc"
fi
if [ -n "$DRIVER_MAJOR" ]; then
  DEFAULT_EXTRAS="$DEV_EXTRA,$GPU_EXTRA"
else
  DEFAULT_EXTRAS="$DEV_EXTRA"
  if [ -z "${FRUSTUM_EXTRAS:-}" ]; then
    echo "setup: no CUDA driver here (nvidia-smi): the GPU runtime (CuPy) is not installed;" \
         "the CPU backends and the NVRTC compile tests work without it. To add it:" \
         "FRUSTUM_EXTRAS=$DEV_EXTRA,$GPU_EXTRA scripts/setup.sh" >&2
  fi
fi
EXTRAS="${FRUSTUM_EXTRAS:-$DEFAULT_EXTRAS}"
# pip only warns about an extra the project does not have and installs without it (a
# GPU environment without CuPy), so a misspelt or removed extra stops here.
known_extras="$(sed -n '/^\[project.optional-dependencies\]/,/^\[/s/^\([a-z0-9-]*\) = \[.*/\1/p' pyproject.toml)"
for e in ${EXTRAS//,/ }; do
  if ! grep -qx -- "$e" <<<"$known_extras"; then
    echo "setup: FRUSTUM_EXTRAS: pyproject.toml has no extra '$e' (extras:" \
         $known_extras")" >&2
    exit 2
  fi
done

missing=""
if command -v dpkg >/dev/null 2>&1; then
  for p in $GL_PACKAGES $BROWSER_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  python3 -c "import ensurepip" >/dev/null 2>&1 || missing="$missing $VENV_PACKAGE"
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing system packages:$missing" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: missing system packages:$missing" >&2
    echo "setup: run: sudo apt-get install -y --no-install-recommends$missing" >&2
    echo "setup: continuing; GL output, window and browser tests need them" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.frustum-installed"
want="$(cat pyproject.toml | sha256sum | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python packages into .venv (extras: $EXTRAS; CUDA $CUDA_MAJOR)" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  case ",$EXTRAS," in
    *,gpu*)
      for p in $OTHER_CUPY; do
        if .venv/bin/python -m pip show -q "$p" >/dev/null 2>&1; then
          echo "setup: uninstalling $p (another CUDA major than $CUDA_MAJOR)" >&2
          .venv/bin/python -m pip uninstall -q -y "$p"
        fi
      done ;;
  esac
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
  echo "$want" > "$stamp"
fi

# The CPU backend's kernels (Numba) compile on first use, tens of seconds on 2 cores:
# compile them here, once per change of the package's sources (the fingerprint the
# kernel cache itself is keyed on: engine.render.backends.kernel_cache), so no first
# picture waits for them (engine.render.warmup; the cache lives beside the modules or in
# NUMBA_CACHE_DIR).
warm_stamp=".venv/.frustum-kernels"
warm_want="$(.venv/bin/python -c 'from engine.render.backends.kernel_cache import source_fingerprint; print(source_fingerprint())')"
if [ ! -f "$warm_stamp" ] || [ "$(cat "$warm_stamp")" != "$warm_want" ]; then
  echo "setup: compiling the CPU kernels once (Numba; about 1-2 minutes on 2 cores)" >&2
  .venv/bin/frustum warmup >&2
  echo "$warm_want" > "$warm_stamp"
fi
