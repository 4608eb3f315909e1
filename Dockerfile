# One image for the three apps; docker-compose.yml picks the app with the command.
FROM node:20-bookworm-slim
WORKDIR /app
# DejaVu Sans: the native renderer's letters beyond Latin (docs/exchange.md#native-11).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
ENV NODE_ENV=production
CMD ["node", "dist/apps/main/src/main.js"]
