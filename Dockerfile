# samedeal race server. Build: docker build -t samedeal .
# Run alone (in-memory broker):   docker run -p 8765:8765 samedeal
# With Redis and N workers:        see compose.yaml
#
# Two stages: the first has a C compiler and builds the wheel, with the engine compiled by
# mypyc (setup.py); the second installs that wheel on the slim image, without the compiler.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY engine ./engine
COPY protocol ./protocol
COPY server ./server
COPY clients ./clients
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY --from=build /wheels /wheels
# (the image must run the compiled engine: a build that fell back to pure Python fails here)
RUN pip install /wheels/*.whl && rm -rf /wheels \
    && python -c "import engine, sys; print(engine.BUILD); sys.exit(not engine.COMPILED)" \
    && useradd --system --uid 10001 samedeal

USER samedeal
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"
# SIGTERM (docker stop) drains: the server closes connections cleanly before exiting.
STOPSIGNAL SIGTERM
ENTRYPOINT ["samedeal", "serve", "--host", "0.0.0.0", "--port", "8765"]
