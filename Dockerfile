# syntax=docker/dockerfile:1
# One image, two commands (docs/deploy.md):
#   node dist/router.js                               the Node router (the default command)
#   node dist/sync.js [--from DIR] [--once] [--print]  the sync of one Kubernetes cluster
# Every step is a command test/build runs: `npm run build`, `npm ci --omit=dev --omit=optional --ignore-scripts`,
# `node dist/...`.
# Node 24 "Krypton", the active LTS (Node 20 is out of support); the code also runs on Node 20.19+ (package.json
# engines), where the tests run.
ARG NODE_IMAGE=node:24-bookworm-slim
# What the image is: its labels, and the revision stamped into the bundles (lib/build-info.ts: `--version`,
# edgeslice_build_info). VERSION is package.json's (test/build keeps them equal); the context has no .git, so
# pass the commit: docker build --build-arg REVISION="$(git rev-parse HEAD)" ...
ARG VERSION=0.1.0
ARG REVISION=unknown

# Build: dev dependencies (esbuild), then bundle our TypeScript into dist/. No install script is needed:
# esbuild finds its platform binary in its optional dependency package.
FROM ${NODE_IMAGE} AS build
ARG REVISION
ENV EDGESLICE_REVISION=${REVISION}
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/dashboard-bundle.mjs scripts/
COPY lib lib
COPY store store
COPY sync sync
COPY functions functions
RUN npm run build

# Runtime: production dependencies only, the bundles and their source maps; no sources, no tsx, no build tools.
# --omit=optional: the only optional packages of the production tree are TypeScript 7 and its ~27 MB native
# compiler, pulled in as valibot's optional peer (types only, never loaded at run time).
FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
ARG VERSION
ARG REVISION
# OCI image annotations: the same version and revision as `--version` and edgeslice_build_info, and the Node.js
# base image the node label of edgeslice_build_info reports from.
LABEL org.opencontainers.image.title="edgeslice" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/sync.js /app/dist/sync.bundle.js /app/dist/sync.bundle.js.map dist/
COPY --from=build /app/dist/router.js /app/dist/router.bundle.js /app/dist/router.bundle.js.map dist/
# Non-root, numeric so Kubernetes can check runAsNonRoot. Everything under /app is root-owned and read-only to
# this user, and neither entry writes to disk, so the container runs with a read-only root filesystem.
USER 65532:65532
EXPOSE 8080 9464
# Node itself is PID 1 (exec form, no shell, no npm in between), so SIGTERM reaches it directly. PID 1 gets no
# default signal actions from the kernel, but both entries install their own SIGTERM/SIGINT handlers (drain,
# flush, release the Lease, exit 0), and neither starts child processes, so there are no zombies to reap: an
# init (tini, docker run --init) would add nothing.
ENTRYPOINT []
CMD ["node", "dist/router.js"]
