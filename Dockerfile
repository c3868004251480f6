# The kube-runtime manager image: `docker build -t REGISTRY/kube-runtime:TAG .`, then
# `cd deploy && kustomize edit set image kube-runtime=REGISTRY/kube-runtime:TAG`.
# Runs as a non-root user on a read-only root filesystem (deploy/manager/deployment.yaml).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kube_runtime kube_runtime
COPY controllers controllers
COPY codegen codegen
RUN python -m pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
COPY --from=build /install /usr/local
# Byte-compile now: the root filesystem is read-only at run time.
RUN python -m compileall -q /usr/local/lib/python3.11/site-packages
USER 65532:65532
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["kube-runtime"]
CMD ["run", "statefulset", "cloneset", "--leader-elect"]
