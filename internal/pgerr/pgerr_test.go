package pgerr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	cases := []struct {
		err  error
		want ErrorClass
	}{
		{nil, ClassNone},
		{pg("53300"), ClassTooManyConnections},
		{pg("57P01"), ClassAdminShutdown},
		{pg("57P02"), ClassAdminShutdown},
		{pg("57P03"), ClassStarting},
		{pg("26000"), ClassPreparedStatements},
		{pg("42P05"), ClassPreparedStatements},
		{fmt.Errorf("failed to connect: %w", fmt.Errorf("tls error: %w", errors.New("server refused TLS connection"))), ClassTLS},
		{fmt.Errorf("write: %w", &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "db"}}), ClassTLS},
		{fmt.Errorf("read: %w", tls.AlertError(42)), ClassTLS},
		{pg("40P01"), ClassDeadlock},
		{pg("40001"), ClassSerialization},
		{pg("57014"), ClassTimeout},
		{pg("25006"), ClassReadOnly},
		{pg("23505"), ClassConstraint},
		{pg("23503"), ClassConstraint},
		{pg("28P01"), ClassAuth},
		{pg("28000"), ClassAuth},
		{pg("08006"), ClassConnectionLost},
		{pg("42P01"), ClassOther},
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, ClassDNS},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, ClassConnectRefused},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ClassConnectionLost},
		{fmt.Errorf("write: %w", syscall.EPIPE), ClassConnectionLost},
		{context.DeadlineExceeded, ClassTimeout},
		{errors.New("something else"), ClassOther},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

func TestDescribeIsOneLine(t *testing.T) {
	err := &pgconn.PgError{Severity: "FATAL", Code: "28P01", Message: "password authentication failed for user \"bench\""}
	if got := Describe(fmt.Errorf("x: %w", err)); got != `FATAL: password authentication failed for user "bench" (SQLSTATE 28P01)` {
		t.Fatalf("got %q", got)
	}
	if got := Describe(errors.New("failed to connect to `user=x`:\n\tdial error: no such host")); got != "failed to connect to `user=x`: dial error: no such host" {
		t.Fatalf("got %q", got)
	}
}

func TestDetail(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err := fmt.Errorf("tx: %w", &pgconn.PgError{Severity: "ERROR", Code: "26000",
		Message: `prepared statement "stmtcache_1" does not exist`, Detail: "d\nmore", Hint: "h"})
	d := Detail(err, at)
	want := ErrorDetail{Time: at, Severity: "ERROR", SQLState: "26000",
		Message: `prepared statement "stmtcache_1" does not exist`, Detail: "d more", Hint: "h"}
	if d != want {
		t.Fatalf("got %+v", d)
	}
	d = Detail(errors.New("dial error:\n\tconnection refused"), at)
	if d.SQLState != "" || d.Message != "dial error: connection refused" || !d.Time.Equal(at) {
		t.Fatalf("got %+v", d)
	}
}
