# One image for the three apps; docker-compose.yml picks the app with the command.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
ENV NODE_ENV=production
CMD ["node", "dist/apps/main/src/main.js"]
