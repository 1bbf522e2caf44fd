# syntax=docker/dockerfile:1
# Multi-stage: build with dev dependencies, ship only the compiled output and production dependencies.
# hack/check-image-steps.sh repeats the runtime stage's steps without Docker (CI has no engine).
FROM node:24.9.0-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the `node` devDependency's install script is only for local development.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY webhook ./webhook
COPY controller ./controller
COPY certs ./certs
COPY plugin ./plugin
COPY bench ./bench
COPY test/support ./test/support
RUN npx tsc -p tsconfig.build.json

FROM node:24.9.0-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
# The distroless-style numeric user matches runAsUser in manifests/base.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["node"]
CMD ["dist/webhook/main.js", "--help"]
