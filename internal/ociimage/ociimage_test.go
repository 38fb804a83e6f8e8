package ociimage

import (
	"archive/tar"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// buildPgarena builds pgarena as make image does: static, for this machine.
func buildPgarena(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH: cannot build the binary to put in the image")
	}
	out := filepath.Join(dir, "pgarena-linux")
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", out,
		"-ldflags", "-X github.com/pgarena/pgarena/internal/cli.Version=9.9.9-test", "../../cmd/pgarena")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestImageRunsPgarena builds the image from a fresh static binary, writes it
// as a docker archive, opens that archive as docker load would, checks the
// config and runs the binary taken out of the image's layers.
func TestImageRunsPgarena(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	spec := Spec{Binary: buildPgarena(t, dir), Certs: certs, Version: "9.9.9-test", Revision: "abc123", Created: created}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := WriteArchive(archive, "pgarena:9.9.9-test", img); err != nil {
		t.Fatal(err)
	}
	// docker load reads manifest.json at the archive's top.
	if !tarHas(t, archive, "manifest.json") {
		t.Fatal("archive has no manifest.json: docker load would refuse it")
	}
	tag, _ := name.NewTag("pgarena:9.9.9-test")
	loaded, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := loaded.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != BinaryPath {
		t.Errorf("entrypoint %q, want %q", got, BinaryPath)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want a non-root 65532:65532", cf.Config.User)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "9.9.9-test",
		"org.opencontainers.image.revision": "abc123", "org.opencontainers.image.created": "2026-11-26T12:00:00Z"} {
		if cf.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], want)
		}
	}
	if cf.OS != "linux" || !cf.Created.Time.Equal(created) {
		t.Errorf("os %q created %v", cf.OS, cf.Created.Time)
	}

	// The binary, taken from the flattened filesystem, runs and says its version.
	fs := mutate.Extract(loaded)
	defer fs.Close()
	tr := tar.NewReader(fs)
	found := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		found[strings.TrimSuffix(h.Name, "/")] = true
		if h.Name != BinaryPath[1:] {
			continue
		}
		if h.Mode&0o111 == 0 {
			t.Errorf("binary mode %o is not executable", h.Mode)
		}
		bin := filepath.Join(dir, "from-image")
		f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "9.9.9-test") {
			t.Errorf("pgarena from the image: %v: %s", err, out)
		}
	}
	for _, p := range []string{BinaryPath[1:], CertsPath[1:], "etc/passwd", "tmp", HomeDir[1:]} {
		if !found[p] {
			t.Errorf("image has no %s (has %v)", p, found)
		}
	}

	// Reproducible: the same inputs give the same digest.
	again, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one binary differ: %s vs %s", d1, d2)
	}
}

func TestBuildRefusesDynamicBinary(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	real, _ := filepath.EvalSymlinks(sh)
	_, err = Build(Spec{Binary: real, Created: time.Unix(0, 0)})
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("a dynamically linked binary was accepted: %v", err)
	}
}

func tarHas(t *testing.T, path, name string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			return false
		}
		if h.Name == name {
			return true
		}
	}
}

// TestPushToRegistry pushes the image to a real registry (Debian's
// docker-registry, the CNCF distribution server) on a loopback port and reads
// it back by digest, as make image PUSH=... does.
func TestPushToRegistry(t *testing.T) {
	server, err := exec.LookPath("docker-registry")
	if err != nil {
		server = "/usr/bin/docker-registry"
		if _, err := os.Stat(server); err != nil {
			if os.Getenv("PGARENA_REQUIRE_PG") == "1" {
				t.Fatal("docker-registry not installed (scripts/install-deps.sh --tests installs it)")
			}
			t.Skip("docker-registry not installed: no registry to push to")
		}
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(dir, "config.yml")
	os.WriteFile(cfg, []byte("version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: "+dir+"/data\nhttp:\n  addr: "+addr+"\n"), 0o644)
	cmd := exec.Command(server, "serve", cfg)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry did not answer on %s in 15 s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	img, err := Build(Spec{Binary: buildPgarena(t, dir), Version: "9.9.9-test", Created: time.Unix(1e9, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(addr + "/pgarena:9.9.9-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(ref.String(), img); err != nil {
		t.Fatalf("push: %v\n%s", err, log.String())
	}
	pulled, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	got, _ := pulled.Digest()
	if got != want {
		t.Fatalf("pulled %s, pushed %s", got, want)
	}
}
