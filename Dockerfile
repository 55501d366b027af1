# syntax=docker/dockerfile:1
# One image for every Procfile role: the command picks the role (web by default).

# --- build: compiles the TypeScript sources with the dev dependencies ---
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/package.json
# npm ci runs the repository's `prepare` (sdk/scripts/prepare.mjs), which skips the build here,
# and its `postinstall`, which applies patches/ to the installed dependencies (patch-package).
COPY sdk/scripts sdk/scripts
COPY patches patches
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY api api
COPY core core
COPY workers workers
COPY scripts scripts
COPY sdk sdk
RUN npx tsc -p tsconfig.build.json && npx tsc -p sdk/tsconfig.json

# --- runtime: production dependencies, compiled code and the files read at run time ---
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/package.json
COPY sdk/scripts sdk/scripts
COPY patches patches
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist dist
COPY --from=build /app/sdk/dist sdk/dist
COPY schemas schemas
COPY templates templates
COPY examples examples
# The image's files stay root-owned and read-only to the process, which runs as the image's
# unprivileged `node` user.
USER node
EXPOSE 8080
# Liveness of the web role; worker roles serve no HTTP and turn this off (deploy/compose.yml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=128", "--heap-growing-percent=50", "dist/api/main.js"]
