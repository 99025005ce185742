# nlid dashboard image.
#
#   docker build -t nlid .
#   docker run -d --name nlid --restart unless-stopped --memory 8g --memory-swap 8g \
#       -v nlid-data:/data -p 127.0.0.1:8501:8501 nlid   # then open http://localhost:8501
#
# Saved studies go to a SQLite file in /data (keep it on a volume), or to PostgreSQL with
# NLID_DATABASE_URL: compose.yaml runs both services (see README, "Running nlid for a lab").
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
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    NLID_DATA_DIR=/data \
    PYTHONPATH=/app

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
# The Streamlit settings only: a secrets.toml (sign-in) is mounted at run time, never baked in.
COPY .streamlit/config.toml ./.streamlit/

# Unprivileged numeric user (works under runtimes that forbid root, e.g. OpenShift's random UIDs
# via group 0): a home directory, a numba cache and the data directory (the default SQLite study
# database) it can write; the code stays read-only. PYTHONPATH lets `dask worker` import nlid_core.
RUN mkdir -p /home/nlid /tmp/numba-cache /data \
    && chown -R 10001:0 /home/nlid /tmp/numba-cache /data \
    && chmod -R g=u /home/nlid /tmp/numba-cache /data
VOLUME ["/data"]
USER 10001

EXPOSE 8501

# Healthy = the study database answers at this version's schema (SELECT 1, connect timeout) and the
# dashboard answers on /_stcore/health; each check is bounded by --timeout (s).
HEALTHCHECK --interval=30s --timeout=20s --start-period=60s --retries=3 \
    CMD ["python", "-m", "nlid_core", "health", "--url", "http://localhost:8501", "--timeout", "5"]

ENTRYPOINT ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", "--browser.gatherUsageStats=false"]
