// Package ociimage builds pgarena's container image without a Docker
// daemon: a static pgarena binary, the host's CA certificates and a non-root
// user, on an empty base, with go-containerregistry. The image is written as
// a docker-archive tarball (what `docker load`, `podman load` and `kind load
// image-archive` accept), as an OCI image layout, or pushed to a registry.
//
// Builds are reproducible: every file and the image's creation time carry
// one timestamp (Spec.Created, from the commit), so the same binary gives the
// same digest.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed layout.
const (
	BinaryPath = "/usr/local/bin/pgarena"
	CertsPath  = "/etc/ssl/certs/ca-certificates.crt"
	HomeDir    = "/home/pgarena"
	// UID and GID of the image's user: not root, and outside the range
	// distributions give their own users (distroless's "nonroot" uses it too).
	UID = 65532
)

// Spec is what goes into the image.
type Spec struct {
	Binary   string    // path of a static (CGO_ENABLED=0) linux pgarena binary
	Certs    string    // path of a CA bundle (PEM); empty: none in the image
	Version  string    // pgarena's version (git describe)
	Revision string    // the commit
	Source   string    // where the source lives (a URL), optional
	Created  time.Time // the time stamped on every file and on the image
	Arch     string    // GOARCH of the binary; empty: runtime.GOARCH
}

// Labels are the OCI annotations the image's config carries.
func (s Spec) Labels() map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "pgarena",
		"org.opencontainers.image.description": "PostgreSQL benchmarking workbench",
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.revision":    s.Revision,
		"org.opencontainers.image.created":     s.Created.UTC().Format(time.RFC3339),
	}
	if s.Source != "" {
		l["org.opencontainers.image.source"] = s.Source
	}
	return l
}

// Build assembles the image: one layer with the base files (user, group,
// home, tmp, certificates), one with the binary, so a new build of pgarena
// changes only the second.
func Build(s Spec) (v1.Image, error) {
	if s.Binary == "" {
		return nil, errors.New("ociimage: no binary given")
	}
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("ociimage: %w", err)
	}
	if !isStaticELF(bin) {
		return nil, fmt.Errorf("ociimage: %s is not a static ELF binary (build it with CGO_ENABLED=0 GOOS=linux)", s.Binary)
	}
	base := []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\npgarena:x:%d:%d:pgarena:%s:/sbin/nologin\n", UID, UID, HomeDir))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\npgarena:x:%d:\n", UID))},
		{name: "home/", mode: 0o755, dir: true},
		{name: HomeDir[1:] + "/", mode: 0o755, dir: true, uid: UID},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	if s.Certs != "" {
		pem, err := os.ReadFile(s.Certs)
		if err != nil {
			return nil, fmt.Errorf("ociimage: CA certificates: %w", err)
		}
		base = append(base,
			file{name: "etc/ssl/", mode: 0o755, dir: true},
			file{name: "etc/ssl/certs/", mode: 0o755, dir: true},
			file{name: CertsPath[1:], mode: 0o644, data: pem})
	}
	binLayer := []file{
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: BinaryPath[1:], mode: 0o755, data: bin},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, files := range [][]file{base, binLayer} {
		l, err := layer(files, s.Created)
		if err != nil {
			return nil, err
		}
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: s.Created}, CreatedBy: "pgarena ociimage"}}); err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = s.Arch
	if cf.Architecture == "" {
		cf.Architecture = runtime.GOARCH
	}
	cf.OS = "linux"
	cf.Created = v1.Time{Time: s.Created}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"--help"},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		WorkingDir: HomeDir,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + HomeDir,
			"SSL_CERT_FILE=" + CertsPath},
		Labels: s.Labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// WriteArchive writes img as a docker-archive tarball tagged ref.
func WriteArchive(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("ociimage: image name %q: %w", ref, err)
	}
	return tarball.WriteToFile(path, tag, img)
}

// Push writes img to a registry reference (registry/name:tag) with the
// credentials docker and podman keep (~/.docker/config.json, credential
// helpers). Loopback registries are spoken to over plain HTTP.
func Push(ref string, img v1.Image) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("ociimage: image reference %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", r, err)
	}
	return nil
}

type file struct {
	name string
	mode int64
	dir  bool
	uid  int
	data []byte
}

// layer makes an uncompressed tar of files, every entry stamped with t,
// wrapped as a gzip-compressed layer.
func layer(files []file, t time.Time) (v1.Layer, error) {
	sort.SliceStable(files, func(i, j int) bool { return path.Clean(files[i].name) < path.Clean(files[j].name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: t, Uid: f.uid, Gid: f.uid, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// isStaticELF reports whether b is an ELF executable without a program
// interpreter (PT_INTERP): one that runs on an empty base.
func isStaticELF(b []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return false
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return f.Type == elf.ET_EXEC || f.Type == elf.ET_DYN
}
