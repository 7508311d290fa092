# The operator image: one description for Docker and for `make image`.
#
#   docker build -t ghcr.io/predictive-scaler/operator:0.1.0 .
#   make image      # buildah, no daemon: BASE is a Debian made by mmdebstrap from Debian's
#                   # packages (python3, python3-venv, ca-certificates), no registry needed
#
# BASE needs python3 (3.11+) with venv, and useradd.
ARG BASE=python:3.11-slim

# The dependencies and the build backend, from pyproject.toml alone: a change to
# the code reinstalls neither. Their test suites (a sixth of the venv) go.
FROM ${BASE} AS dependencies
COPY pyproject.toml /src/
RUN python3 -m venv /venv \
    && /venv/bin/python -m pip install --upgrade pip \
    && /venv/bin/python -c "import subprocess, sys, tomllib; \
project = tomllib.load(open('/src/pyproject.toml', 'rb')); \
needs = project['project']['dependencies'] + project['build-system']['requires']; \
subprocess.check_call([sys.executable, '-m', 'pip', 'install', *needs])" \
    && find /venv/lib -depth -type d \( -name tests -o -name test \) -path '*/site-packages/*' \
        -exec rm -rf {} +

FROM ${BASE}
# A fixed non-root user (Debian already has a group named operator); the chart
# runs it with a read-only root filesystem and a /tmp volume.
RUN groupadd --gid 10001 predictive-scaler \
    && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin predictive-scaler
COPY --from=dependencies /venv /venv
ENV PATH=/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 MPLCONFIGDIR=/tmp
ENTRYPOINT ["predictive-scaler"]
CMD ["run"]
# The code last, so a change to it rebuilds only what follows. Installed, then
# proven: a forecast on the bundled trace runs statsmodels, scikit-learn, scipy
# and pandas as the operator does.
COPY pyproject.toml README.md /src/
COPY src /src/src
RUN pip install --no-deps --no-build-isolation /src \
    && rm -rf /src \
    && predictive-scaler forecast --model auto --horizon 3 > /dev/null
USER 10001:10001
