# samedeal race server. Build: docker build -t samedeal .
# Run alone (in-memory broker):   docker run -p 8765:8765 samedeal
# With Redis and N workers:        see compose.yaml
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY protocol ./protocol
COPY server ./server
COPY clients ./clients
RUN pip install . && useradd --system --uid 10001 samedeal

USER samedeal
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"
# SIGTERM (docker stop) drains: the server closes connections cleanly before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["samedeal", "serve", "--host", "0.0.0.0", "--port", "8765"]
