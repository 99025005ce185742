# nlid dashboard image.
#
#   docker build -t nlid .
#   docker run -d --name nlid --restart unless-stopped --memory 8g --memory-swap 8g \
#       -p 127.0.0.1:8501:8501 nlid         # then open http://localhost:8501 (or use compose.yaml)
#
# The base image is pinned to one Python release on one Debian release; pin it by digest as well
# where your registry allows (BASE=python:3.11.14-slim-bookworm@sha256:...). BASE can point at a
# mirror of the same image:
#   docker build --build-arg BASE=registry.example.org/python:3.11.14-slim-bookworm -t nlid .
ARG BASE=python:3.11.14-slim-bookworm
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/home/nlid \
    NUMBA_CACHE_DIR=/tmp/numba-cache

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock file changes. Runtime packages only,
# every one pinned with its hashes, so two builds install the same files.
COPY requirements-lock.txt ./
RUN python -m pip install --no-cache-dir --require-hashes -r requirements-lock.txt

# Only what the app needs at run time.
COPY app.py ./
COPY app_pages/ ./app_pages/
COPY app_support/ ./app_support/
COPY nlid_core/ ./nlid_core/
COPY .streamlit/ ./.streamlit/

# Unprivileged numeric user (works under runtimes that forbid root, e.g. OpenShift's random UIDs
# via group 0): a home directory and a numba cache it can write; the code stays read-only.
RUN mkdir -p /home/nlid /tmp/numba-cache \
    && chown -R 10001:0 /home/nlid /tmp/numba-cache \
    && chmod -R g=u /home/nlid /tmp/numba-cache
USER 10001

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", "--browser.gatherUsageStats=false"]
