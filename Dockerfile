# The operator image. Not built in this project's CI (no container engine there);
# build it with `docker build -t predictive-scaler .` where one is available.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN python -m venv /venv && /venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim
COPY --from=build /venv /venv
# A fixed non-root user; the chart runs it with a read-only root filesystem and a /tmp volume.
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin operator
USER 10001:10001
ENV PATH=/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 MPLCONFIGDIR=/tmp
ENTRYPOINT ["predictive-scaler"]
CMD ["run"]
