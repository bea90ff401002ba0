#!/usr/bin/env bash
# Prepares this checkout to run: system GL libraries (Mesa EGL/llvmpipe, Xvfb) and a
# virtual environment in .venv with the engine and its extras. Safe to run repeatedly:
# packages are reinstalled only when pyproject.toml changes.
set -euo pipefail
cd "$(dirname "$0")/.."

GL_PACKAGES="xvfb xauth libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri"
VENV_PACKAGE="python3-venv"
EXTRAS="${FRUSTUM_EXTRAS:-dev,fast,gpu}"

missing=""
if command -v dpkg >/dev/null 2>&1; then
  for p in $GL_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
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
    echo "setup: continuing; GL output and window tests need them" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.frustum-installed"
want="$(cat pyproject.toml | sha256sum | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python packages into .venv (extras: $EXTRAS)" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
  echo "$want" > "$stamp"
fi
