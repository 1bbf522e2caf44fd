# syntax=docker/dockerfile:1
# Build with dev dependencies, then ship a minimal image: the Node.js binary and the libraries it links,
# the bundled programs (hack/bundle.mjs), nothing else (no shell, no package manager, no node_modules).
# The image's file tree is staged by hack/node/image-rootfs.sh, the same script the engine-less build
# (hack/node/images.sh, buildah) uses; test/e2e/image.test.ts builds this file with buildah and compares.
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
COPY demo ./demo
COPY test/support ./test/support
COPY hack/bundle.mjs ./hack/
RUN npx tsc -p tsconfig.build.json && node hack/bundle.mjs
COPY hack/node/image-rootfs.sh ./hack/node/
RUN PHASED_ROLLOUT_IMAGE_NODE=/usr/local/bin/node bash hack/node/image-rootfs.sh /rootfs /src

FROM scratch
COPY --from=build /rootfs/ /
ENV NODE_ENV=production PATH=/usr/local/bin:/usr/bin:/bin
# hack/runtime.env (why: there).
ENV MALLOC_MMAP_THRESHOLD_=32768 MALLOC_ARENA_MAX=2
WORKDIR /app
# The distroless-style numeric user matches runAsUser in manifests/base.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["node"]
CMD ["dist/bundle/webhook.mjs", "--help"]
