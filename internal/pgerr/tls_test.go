package pgerr_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestTLSFailuresOnARealServer: TLS failures as pgconn reports them from a
// real server are class tls, not connect_refused: sslmode=require against
// a server without TLS, and verify-full against a certificate that names
// another host.
func TestTLSFailuresOnARealServer(t *testing.T) {
	c := pgtest.NewCluster(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connectErr := func(dsn string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			conn.Close(ctx)
			t.Fatalf("connected with %s", dsn)
		}
		return err
	}

	err := connectErr(c.TCPDSN("postgres") + " sslmode=require")
	if got := pgerr.Classify(err); got != pgerr.ClassTLS {
		t.Errorf("sslmode=require against ssl=off: class %s, want tls (%v)", got, err)
	}

	// A self-signed certificate for another host name, in the data
	// directory (the server's account can reach it); the key must belong
	// to that account.
	dir := c.DataDir()
	certPath, keyPath := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	writeSelfSigned(t, certPath, keyPath, "not-this-host.example")
	fi, err := os.Stat(c.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		for _, p := range []string{certPath, keyPath} {
			if err := os.Chown(p, int(st.Uid), int(st.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	admin, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, sql := range []string{
		"ALTER SYSTEM SET ssl_cert_file = '" + certPath + "'",
		"ALTER SYSTEM SET ssl_key_file = '" + keyPath + "'",
		"ALTER SYSTEM SET ssl = on",
		"SELECT pg_reload_conf()",
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// The reload is asynchronous: wait until a TLS connection works.
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.TCPDSN("postgres")+" sslmode=require")
		if err == nil {
			conn.Close(ctx)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not turn TLS on: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	err = connectErr(c.TCPDSN("postgres") + " sslmode=verify-full sslrootcert=" + certPath)
	if got := pgerr.Classify(err); got != pgerr.ClassTLS {
		t.Errorf("verify-full with a certificate for another host: class %s, want tls (%v)", got, err)
	}
	t.Logf("verify-full: %s", pgerr.Describe(err))
}

func writeSelfSigned(t *testing.T, certPath, keyPath, host string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}
