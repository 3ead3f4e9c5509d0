# syntax=docker/dockerfile:1
# Switchyard's image: the npm package exactly as `npm pack` makes it, with its production
# dependencies from package-lock.json, run by Node 24 as a non-root user. Not built on the
# development machines (they have no Docker engine); test/deploy/image-entrypoint.test.ts runs
# the same install and the same ENTRYPOINT + CMD from a clean directory instead.
ARG NODE_IMAGE=node:24-slim

# Build: dist/ from the TypeScript sources, then the package's own file list (package.json "files").
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir /pkg \
 && tar -xzf /tmp/switchyard-gateway-*.tgz -C /pkg

# Runtime: production dependencies only; the code belongs to root, so the gateway cannot change it.
FROM ${NODE_IMAGE} AS runtime
# MALLOC_MMAP_THRESHOLD_: what the bin sets when it re-runs itself (bin/serving-env.mjs);
# this ENTRYPOINT starts Node with the heap flags, so no re-run happens.
ENV NODE_ENV=production \
    MALLOC_MMAP_THRESHOLD_=1048576 \
    SWITCHYARD_HEALTHCHECK_URL=http://127.0.0.1:8080/healthz
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p /etc/switchyard /var/lib/switchyard \
 && chown 1000:1000 /var/lib/switchyard
COPY --from=build /pkg/package/ ./

# The image's `node` user. Numeric, so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
# gateway.yaml (and secrets/) are mounted at /etc/switchyard; state.file belongs in /var/lib/switchyard.
# Nothing else is written: the root filesystem can be read-only.
VOLUME ["/etc/switchyard", "/var/lib/switchyard"]
EXPOSE 8080 9464

# No curl in a slim image: Node's fetch. Set SWITCHYARD_HEALTHCHECK_URL when server.port is not 8080.
HEALTHCHECK --interval=15s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.SWITCHYARD_HEALTHCHECK_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Exec form: Node is PID 1 and receives SIGTERM itself (graceful shutdown within server.shutdownGraceMs).
# The bin's V8 flags are given here, so the bin serves in this process instead of re-running Node.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=25", "--no-concurrent-recompilation", "/app/bin/switchyard.mjs"]
# --host: a container must listen beyond its own loopback (this overrides server.host).
CMD ["serve", "--config", "/etc/switchyard/gateway.yaml", "--host", "0.0.0.0"]
