# syntax=docker/dockerfile:1
# Multi-stage build: a static approvalbot binary on a distroless base,
# running as a non-root user with its data on a volume.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/approvalbot ./cmd/approvalbot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/approvalbot /usr/local/bin/approvalbot
# distroless "nonroot" is uid 65532; the data volume must be writable by it.
USER 65532:65532
ENV APPROVALBOT_DATA_DIR=/data \
    APPROVALBOT_LISTEN=0.0.0.0:8754
VOLUME ["/data"]
EXPOSE 8754
# The image has no shell or curl: the binary checks its own health.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/approvalbot", "doctor", "--health"]
ENTRYPOINT ["/usr/local/bin/approvalbot"]
CMD ["serve"]
