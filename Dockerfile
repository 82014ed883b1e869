# mediagate: `docker build -t mediagate .`; two instances behind nginx on PostgreSQL and Redis:
# compose.yaml (docs/deployment.md).

# Build: compile src/ to dist/ and the web console, with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime: production dependencies and the built dist/ only, run by the unprivileged user node.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
# The compiler toolchain is there only for a native module without a prebuilt binary (better-sqlite3)
# and is removed in the same layer.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && npm ci --omit=dev \
 && npm cache clean --force \
 && apt-get purge -y python3 make g++ \
 && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/dist ./dist
# The embedded default's SQLite database (./data): the one place the process writes.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js", "serve"]
