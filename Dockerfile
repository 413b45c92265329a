# syntax=docker/dockerfile:1
# The epicflow GitHub App as an image. Build: docker build -t epicflow-app .
# Run:   docker run -p 3000:3000 -e APP_ID -e PRIVATE_KEY -e WEBHOOK_SECRET epicflow-app
# See docs/setup-app.md ("Run it as a container"). test/app/dockerfile.test.ts checks this file.
ARG NODE_VERSION=24

# Build stage: every dependency, compile src/ into lib/.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No lifecycle scripts: `prepare` would build before the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

# Final stage: production dependencies and the built App only, run as the unprivileged `node` user.
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    LOG_FORMAT=json \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/lib ./lib
COPY app.yml ./
USER node
EXPOSE 3000
# 200 while the App can sign its JWT and no delivery is stuck; 503 with a JSON reason otherwise.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `npm start` without npm in between, so SIGTERM reaches the App (it finishes queued deliveries).
CMD ["node", "node_modules/probot/bin/probot.js", "run", "./lib/app/index.js"]
