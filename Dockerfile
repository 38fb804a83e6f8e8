# For people who build with docker; `make image` builds the same image without a daemon.
#   docker build -t pgarena:dev --build-arg VERSION=dev .
FROM golang:1.26 AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/pgarena/pgarena/internal/cli.Version=${VERSION}" \
	-o /out/pgarena ./cmd/pgarena && \
	mkdir -p /out/home/pgarena /out/tmp && chmod 1777 /out/tmp && \
	printf 'root:x:0:0:root:/root:/sbin/nologin\npgarena:x:65532:65532:pgarena:/home/pgarena:/sbin/nologin\n' >/out/passwd && \
	printf 'root:x:0:\npgarena:x:65532:\n' >/out/group

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title=pgarena org.opencontainers.image.version=${VERSION}
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build --chown=65532:65532 /out/home/pgarena /home/pgarena
COPY --from=build /out/tmp /tmp
COPY --from=build /out/pgarena /usr/local/bin/pgarena
USER 65532:65532
WORKDIR /home/pgarena
ENV HOME=/home/pgarena SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
ENTRYPOINT ["/usr/local/bin/pgarena"]
CMD ["--help"]
