// Command pgarena-image builds pgarena's container image without a Docker
// daemon (internal/ociimage) and writes it as a docker-archive tarball, an
// OCI image layout, or pushes it to a registry. `make image` runs it; see
// README.md ("Kubernetes").
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/pgarena/pgarena/internal/ociimage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr, "pgarena-image:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "pgarena-image:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(args []string) error {
	fs := flag.NewFlagSet("pgarena-image", flag.ContinueOnError)
	var s ociimage.Spec
	var tag, tarPath, layoutPath, push, created string
	fs.StringVar(&s.Binary, "binary", "bin/pgarena-linux", "static pgarena binary (CGO_ENABLED=0)")
	fs.StringVar(&s.Certs, "certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put in the image (empty: none)")
	fs.StringVar(&s.Version, "version", "dev", "pgarena version (label org.opencontainers.image.version)")
	fs.StringVar(&s.Revision, "revision", "", "commit (label org.opencontainers.image.revision)")
	fs.StringVar(&s.Source, "source", "", "source URL (label org.opencontainers.image.source)")
	fs.StringVar(&s.Arch, "arch", "", "GOARCH of the binary (default: this machine's)")
	fs.StringVar(&created, "created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time, Unix seconds or RFC 3339 (default $SOURCE_DATE_EPOCH, else now)")
	fs.StringVar(&tag, "tag", "pgarena:dev", "image name and tag inside the tarball")
	fs.StringVar(&tarPath, "tar", "", "write a docker-archive tarball here (docker/podman load, kind load image-archive)")
	fs.StringVar(&layoutPath, "layout", "", "write an OCI image layout into this directory")
	fs.StringVar(&push, "push", "", "push to this registry reference (registry/name:tag), with docker's credentials")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if tarPath == "" && layoutPath == "" && push == "" {
		return usageError{errors.New("nothing to write: give --tar, --layout or --push")}
	}
	t, err := parseCreated(created)
	if err != nil {
		return usageError{err}
	}
	s.Created = t
	img, err := ociimage.Build(s)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if tarPath != "" {
		if err := ociimage.WriteArchive(tarPath, tag, img); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%s, %s)\n", tarPath, tag, digest)
	}
	if layoutPath != "" {
		p, err := layout.Write(layoutPath, empty.Index)
		if err != nil {
			return err
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": tag})); err != nil {
			return err
		}
		fmt.Printf("wrote OCI layout %s (%s)\n", layoutPath, digest)
	}
	if push != "" {
		if _, err := name.ParseReference(push); err != nil {
			return usageError{fmt.Errorf("--push %q: %w", push, err)}
		}
		if err := ociimage.Push(push, img); err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", push, digest)
	}
	return nil
}

func parseCreated(v string) (time.Time, error) {
	if v == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--created %q: want Unix seconds or RFC 3339", v)
	}
	return t.UTC(), nil
}
