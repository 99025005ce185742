#!/usr/bin/env bash
# Build the dashboard image WITHOUT a Docker engine (podman/buildah, chroot isolation) and check
# that the container serves Streamlit's health endpoint. Not part of the test suite.
#
# For a Debian 12 machine with no Docker daemon, no pullable base images and no user
# namespaces (CI runners, sandboxes). Run as root from anywhere:
#
#   sudo bash bench/docker_smoke.sh            # base image is built once and reused
#   sudo bash bench/docker_smoke.sh --rebuild-base
#
# Steps:
#   1. a local stand-in for python:3.11-slim: debootstrap'd Debian bookworm (Python 3.11) with a
#      venv at /opt/venv on PATH, imported as localhost/nlid-pybase:bookworm. If this machine's
#      TLS is re-signed by a proxy, the host CA bundle ($PIP_CERT, else the system bundle) is
#      copied into this local base only, never into the Dockerfile;
#   2. podman build --isolation=chroot of a copy of the build context, with BASE set to that image;
#      app.py, app_pages/ or app_support/ that do not exist yet are replaced by placeholders;
#   3. buildah from the image, start its ENTRYPOINT with buildah run --isolation chroot (the host's
#      network namespace), poll http://127.0.0.1:8501/_stcore/health from the host, then run the
#      image's own HEALTHCHECK command inside the container.
# Prints the build time and the health answer; exits non-zero when either step fails.
# Needs: apt-get install -y podman buildah debootstrap   (about 1 minute)
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
BASE_IMAGE="localhost/nlid-pybase:bookworm"
IMAGE="localhost/nlid:smoke"
PORT=8501  # the port the image's HEALTHCHECK uses
HEALTH_TIMEOUT_S=180
REBUILD_BASE=0
[ "${1:-}" = "--rebuild-base" ] && REBUILD_BASE=1

[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap and chroot isolation need it)" >&2; exit 1; }
for tool in podman buildah debootstrap; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y podman buildah debootstrap" >&2; exit 1; }
done
if python3 - "$PORT" <<'EOF'
import socket, sys
s = socket.socket()
sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
EOF
then
    echo "port $PORT is already in use; stop whatever listens there first" >&2
    exit 1
fi

WORK="$(mktemp -d)"
CTR=""
APP_PGID=""
cleanup() {
    if [ -n "$APP_PGID" ]; then kill -- "-$APP_PGID" 2>/dev/null || true; fi
    if [ -n "$CTR" ]; then buildah rm "$CTR" >/dev/null 2>&1 || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

log() { printf '[docker_smoke] %s\n' "$*"; }

# ---------------------------------------------------------------- 1. local base image
if [ "$REBUILD_BASE" -eq 1 ] || ! podman image exists "$BASE_IMAGE"; then
    log "debootstrap bookworm (minbase, python3) -> $BASE_IMAGE"
    t0=$(date +%s)
    ROOTFS="$WORK/rootfs"
    if ! debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$ROOTFS" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1; then
        tail -30 "$WORK/debootstrap.log" >&2
        exit 1
    fi
    chroot "$ROOTFS" python3 -m venv /opt/venv
    ca_bundle="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
    cp "$ca_bundle" "$ROOTFS/etc/ssl/certs/build-host-ca.crt"
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
    tar -C "$ROOTFS" -cf "$WORK/rootfs.tar" .
    podman import \
        --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/build-host-ca.crt' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["python3"]' \
        "$WORK/rootfs.tar" "$BASE_IMAGE" >/dev/null
    rm -rf "$ROOTFS" "$WORK/rootfs.tar"
    log "base image ready in $(( $(date +%s) - t0 )) s"
else
    log "reusing $BASE_IMAGE (--rebuild-base to recreate it)"
fi

# ---------------------------------------------------------------- 2. build
CTX="$WORK/context"
mkdir -p "$CTX"
# The files the Dockerfile may copy, as they are in the working tree (.dockerignore still applies).
for item in Dockerfile .dockerignore requirements-lock.txt requirements-runtime.in README.md app.py app_pages app_support nlid_core .streamlit; do
    [ -e "$REPO/$item" ] && cp -r "$REPO/$item" "$CTX/"
done
placeholders=()
if [ ! -f "$CTX/app.py" ]; then
    printf 'import streamlit as st\n\nst.write("ok")\n' >"$CTX/app.py"
    placeholders+=(app.py)
fi
for d in app_pages app_support; do
    if [ ! -d "$CTX/$d" ]; then mkdir -p "$CTX/$d" && touch "$CTX/$d/.keep" && placeholders+=("$d/"); fi
done
[ ${#placeholders[@]} -eq 0 ] || log "placeholders (not in the repository yet): ${placeholders[*]}"

log "podman build --isolation=chroot (BASE=$BASE_IMAGE)"
t0=$(date +%s)
if ! podman build --isolation=chroot --format docker --network host \
    --build-arg "BASE=$BASE_IMAGE" -t "$IMAGE" "$CTX" >"$WORK/build.log" 2>&1; then
    tail -40 "$WORK/build.log" >&2
    echo "build failed" >&2
    exit 1
fi
build_s=$(( $(date +%s) - t0 ))
log "build took ${build_s} s; image size $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"

# ---------------------------------------------------------------- 3. run and check health
read_config() { podman image inspect --format "{{json .Config.$1}}" "$IMAGE"; }
user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
log "image user: ${user:-<root!>}"
mapfile -t entrypoint < <(read_config Entrypoint | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin) or []))')
[ ${#entrypoint[@]} -gt 0 ] || { echo "image has no ENTRYPOINT" >&2; exit 1; }

CTR="$(buildah from "$IMAGE")"
log "starting: ${entrypoint[*]}"
setsid buildah run --isolation chroot --network host "$CTR" -- "${entrypoint[@]}" >"$WORK/app.log" 2>&1 &
APP_PGID=$!

answer=""
t0=$(date +%s)
while [ $(( $(date +%s) - t0 )) -lt "$HEALTH_TIMEOUT_S" ]; do
    answer="$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$PORT/_stcore/health', timeout=2).read().decode())" 2>/dev/null || true)"
    [ "$answer" = "ok" ] && break
    kill -0 "$APP_PGID" 2>/dev/null || { cat "$WORK/app.log" >&2; echo "the app exited" >&2; exit 1; }
    sleep 1
done
health_s=$(( $(date +%s) - t0 ))
if [ "$answer" != "ok" ]; then
    cat "$WORK/app.log" >&2
    echo "no 'ok' from /_stcore/health within ${HEALTH_TIMEOUT_S} s" >&2
    exit 1
fi
log "health answered '$answer' after ${health_s} s"

# The image's own HEALTHCHECK command, run inside the container as the image user.
mapfile -t check < <(read_config Healthcheck | python3 -c '
import json, sys
test = (json.load(sys.stdin) or {}).get("Test") or []
print("\n".join(test[1:] if test[:1] == ["CMD"] else []))')
[ ${#check[@]} -gt 0 ] || { echo "image has no exec-form HEALTHCHECK" >&2; exit 1; }
if buildah run --isolation chroot --network host "$CTR" -- "${check[@]}"; then
    log "HEALTHCHECK command inside the container: exit 0"
else
    echo "HEALTHCHECK command failed inside the container" >&2
    exit 1
fi

# The served page, and one run of the app script inside the image (imports, first page, no exception).
python3 -c "import urllib.request; r = urllib.request.urlopen('http://127.0.0.1:$PORT/', timeout=5); assert r.status == 200 and b'<html' in r.read().lower()"
log "GET / answered 200 with the app's HTML"
buildah run --isolation chroot "$CTR" -- python -c '
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120).run()
if at.exception:
    sys.exit("app.py raised inside the image: " + "; ".join(e.message for e in at.exception))
print("app.py ran inside the image without an exception")'

# The numba cache must be writable by the image user.
buildah run --isolation chroot "$CTR" -- python -c \
    'import os, tempfile; d = os.environ["NUMBA_CACHE_DIR"]; os.makedirs(d, exist_ok=True); tempfile.NamedTemporaryFile(dir=d).close(); print("uid", os.getuid(), "can write", d)'

echo "build_s=${build_s} health=${answer} placeholders=${#placeholders[@]}"
