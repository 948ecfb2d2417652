// Command stepfold-ferretdb runs FerretDB v1 embedded, with its SQLite backend,
// so the MongoDB store adapter can be tested against a real wire-protocol server
// without MongoDB itself (not packaged for Debian). Started by scripts/services.sh.
//
// We embed the library instead of `go install`-ing FerretDB's own binary because
// that binary panics when built outside FerretDB's release process (missing
// generated version files); the embeddable package tolerates their absence.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("data", ".services/ferretdb-data", "directory for SQLite database files")
	logLevel := flag.String("log-level", "error", "log level: debug, info, warn, error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fatal("bad -log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		fatal("data dir: %v", err)
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		fatal("data dir: %v", err)
	}

	// FerretDB listens on a private Unix socket; clients reach it through the serializing proxy.
	sock := filepath.Join(os.TempDir(), fmt.Sprintf("stepfold-ferretdb-%d.sock", os.Getpid()))
	_ = os.Remove(sock)
	defer os.Remove(sock)

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{Unix: sock},
		Logger:   logger,
		Handler:  "sqlite",
		// FerretDB wants a directory URI with a trailing slash; one SQLite file per database.
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		fatal("%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// New has already bound the socket, so the proxy can forward from the first client on.
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fatal("listen: %v", err)
	}
	proxy := &serializer{backend: func() (net.Conn, error) { return net.Dial("unix", sock) }, logger: logger}
	go func() {
		if err := proxy.serve(l); err != nil {
			fatal("proxy: %v", err)
		}
	}()
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	fmt.Fprintf(os.Stderr, "stepfold-ferretdb: serving mongodb://%s/ (one command at a time; sqlite data in %s)\n", *addr, dir)

	if err = f.Run(ctx); err != nil {
		fatal("%v", err)
	}
	fmt.Fprintln(os.Stderr, "stepfold-ferretdb: stopped")
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "stepfold-ferretdb: "+format+"\n", args...)
	os.Exit(1)
}
