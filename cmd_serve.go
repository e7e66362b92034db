package main

// This file implements the serve command: a web page and a JSON API over
// every live run of the machine, for a browser or a phone. The serve*.go
// files make one concern — serve.go the command, its listener and its
// token; serveauth.go who may do what (serveGate, in front of every
// request); serveapi.go the API and the page; serveevents.go the event
// streams; servepage/ the page itself — and its entry type is server. The
// rules are:
//
//   - The runs come from the registry and its views (registry.go, ps.go):
//     the server reads the files the runs write, and acts on a run only as
//     'claude-iterate stop' and 'answer' do (runView's actions). It never
//     signals a run, never writes a run's files but the stop request and
//     the answer, and a run never waits on it: stopping serve, or a client
//     that stops reading, leaves every run as it was.
//   - It listens on 127.0.0.1 unless --listen says otherwise, on --port or
//     a free port; another address is plain HTTP, and it says so.
//   - Every request carries the secret token (serveauth.go). The token is
//     random, kept 0600 in the state directory (through the one writer)
//     and used again by the next serve, so that a phone's cookie and a
//     bookmark outlive a restart; removing the file makes a new one.
//   - Idle, it does nothing: no timer runs unless a stream is open, which
//     reads its run's files every servePoll; an open page asks for the
//     list every 2 s while it is shown (servepage/app.js).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveUsage is the manual of the serve command.
const serveUsage = `Usage: claude-iterate serve [--port N] [--listen ADDR] [--read-only]

Serves a web page and a JSON API over every run going on on this machine
(those 'claude-iterate ps' lists): the page lists the runs, follows the one
you open as it changes, shows its history chart and its last lines, and
has buttons to stop a run after its iteration, cancel the stop, and answer
the agent's question. It needs no network access (no CDN) and fits a
phone's screen. Stopping serve (Ctrl+C) never touches a run.

It listens on 127.0.0.1, on port N or a free one, and prints its URL once,
with a random secret token: open that URL (the token is then kept in a
cookie, and leaves the address bar). Every request needs the token; a
request that changes something must come from the page itself, or carry
the token in an Authorization: Bearer header. The token is kept (0600) in
$XDG_STATE_HOME/claude-iterate/serve.json, and the next serve uses it
again; remove that file for a new one.

The API:
  GET    /api/runs               the runs, as 'ps --json' shows them
  GET    /api/runs/ID            one run, with its last records and lines
  GET    /api/runs/ID/events     its events (Server-Sent Events, one per
                                 data: line, as 'run --events' writes them)
  POST   /api/runs/ID/stop       ask it to stop after its iteration
  DELETE /api/runs/ID/stop       cancel that
  POST   /api/runs/ID/answer     answer its question: {"answer": "text"}

Options:
  --port N         the port (default: a free one)
  --listen ADDR    listen on ADDR (a host or host:port) instead of
                   127.0.0.1: plain HTTP, readable on the way; prefer an
                   SSH tunnel (ssh -L 8080:127.0.0.1:8080 host) or a
                   private network such as Tailscale; on 0.0.0.0 (IPv4)
                   or :: (every address), the URL of each of this
                   machine's addresses
  --read-only      show the runs, with no action (no stop, no answer)

Exit status: it serves until stopped: 130 after Ctrl+C, 143 after SIGTERM;
1 error (it cannot listen); 2 usage error.

Examples:
  claude-iterate serve
  claude-iterate serve --port 8080 --read-only
  claude-iterate serve --listen 100.64.0.7 --port 8080   # a Tailscale address
`

// servePoll is how often an open stream looks at its run's files (a
// variable for the tests).
var servePoll = 500 * time.Millisecond

// serveFile is the file, in the state directory, holding the token and the
// URL of the last serve.
const serveFile = "serve.json"

// serveInfo is serveFile's content.
type serveInfo struct {
	Token string `json:"token"`
	URL   string `json:"url"` // with the token
	PID   int    `json:"pid"`
}

// server is the serve command's HTTP server: the concern's entry type.
type server struct {
	token    string
	readOnly bool
	// streams bounds the open event streams (serveevents.go).
	streams chan struct{}
	mux     *http.ServeMux
	// reader reads the runs for GET /api/runs, again only what changed
	// (the page asks every 2 s); mu serialises it.
	mu     sync.Mutex
	reader *runsReader
}

func runServe(env *cliEnv, args []string) error {
	fs := newFlagSet("serve")
	var portArg portFlag
	fs.Var(&portArg, "port", "")
	port := &portArg.n
	var listenFlag stringFlag
	fs.Var(&listenFlag, "listen", "")
	listen := &listenFlag.s
	readOnly := fs.Bool("read-only", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if err := listenFlag.notBlank("--listen"); err != nil {
		return err
	}
	if *port < 0 || *port > 65535 {
		return usagef("--port %d: want 0 to 65535", *port)
	}
	addr, err := listenAddr(*listen, *port)
	if err != nil {
		return err
	}
	if registryDir() == "" {
		return withHint(errors.New("no state directory to keep the token in: $HOME and $XDG_STATE_HOME are unset"), "set XDG_STATE_HOME")
	}
	if b, _ := stateBase(); b.usable() != nil {
		return prefixErr("no state directory to keep the token in", b.usable())
	}
	stateDir := filepath.Dir(registryDir())
	token, err := serveToken(filepath.Join(stateDir, serveFile))
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	network := "tcp" // an unspecified IPv4 address (0.0.0.0): IPv4 only, as asked
	if ip := net.ParseIP(host); ip != nil && ip.To4() != nil {
		network = "tcp4"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return withHint(fmt.Errorf("cannot listen on %s: %w", addr, err), "choose another --port, or none for a free one")
	}
	defer ln.Close()
	s := newServer(token, *readOnly)
	urls := serveURLs(ln.Addr().(*net.TCPAddr), token)
	url := urls[0]
	info, _ := json.MarshalIndent(serveInfo{Token: token, URL: url, PID: os.Getpid()}, "", "  ")
	if err := writeFileAtomic(filepath.Join(stateDir, serveFile), append(info, '\n'), 0o600); err != nil {
		return fmt.Errorf("keeping the token: %w", err)
	}
	if !isLoopback(host) {
		fmt.Fprintf(env.stderr, "%s: warning: serving plain HTTP on %s: the token and the runs can be read on the way; prefer an SSH tunnel or a private network such as Tailscale\n", progName, ln.Addr())
	}
	mode := ""
	if *readOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(env.stdout, "Serving the runs of this machine%s at:\n  %s\n(Ctrl+C stops serving; the runs go on)\n", mode, strings.Join(urls, "\n  "))
	if f, ok := env.stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	return s.serve(env, ln)
}

// serve serves on ln until a signal.
func (s *server) serve(env *cliEnv, ln net.Listener) error {
	srv := &http.Server{
		Handler:           &serveGate{token: s.token, readOnly: s.readOnly, next: s.mux},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// No ReadTimeout, no WriteTimeout: an event stream lasts (a read
		// deadline passed would end it); a body has its own deadline
		// (serveapi.go), and each write of a stream its own.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case sig := <-sigs:
		// Streams end at once; the runs are not told anything.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
		fmt.Fprintf(env.stderr, "Stopped serving; the runs go on.\n")
		return &exitCodeError{code: exitCodeFor(sig)}
	}
}

// listenAddr is the address to listen on: listen (a host, or host:port
// when port is 0) or 127.0.0.1, on port.
func listenAddr(listen string, port int) (string, error) {
	if listen == "" {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
	}
	if host, p, err := net.SplitHostPort(listen); err == nil {
		if port != 0 && p != strconv.Itoa(port) {
			return "", usagef("--listen %s names port %s, and --port %d another", listen, p, port)
		}
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return "", usagef("--listen %s: bad port %q", listen, p)
		}
		return net.JoinHostPort(host, p), nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(listen, "["), "]")
	if strings.ContainsAny(host, "/ ") {
		return "", usagef("--listen %q: want a host or host:port", listen)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// isLoopback reports whether host (an address or a name) is this machine
// only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveURLs are the URLs to print for a as listened on, with token: a's
// own; for an unspecified address (0.0.0.0, ::), one per address of this
// machine's interfaces that is up, neither loopback nor link-local (IPv4
// only for 0.0.0.0), which a phone reaches where a short host name may
// not resolve; the host name when there is none.
func serveURLs(a *net.TCPAddr, token string) []string {
	url := func(host string) string {
		return "http://" + net.JoinHostPort(host, strconv.Itoa(a.Port)) + "/?token=" + token
	}
	if !a.IP.IsUnspecified() {
		return []string{url(a.IP.String())}
	}
	var urls []string
	for _, ip := range machineAddrs(a.IP.To4() != nil) {
		urls = append(urls, url(ip.String()))
	}
	if len(urls) == 0 {
		name, err := os.Hostname()
		if err != nil || name == "" {
			name = a.IP.String()
		}
		urls = append(urls, url(name))
	}
	return urls
}

// machineAddrs are this machine's addresses a phone could reach: of the
// interfaces that are up, neither loopback nor link-local; IPv4 only with
// v4only.
func machineAddrs(v4only bool) []net.IP {
	var ips []net.IP
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, ad := range addrs {
			ipn, ok := ad.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || (v4only && ipn.IP.To4() == nil) {
				continue
			}
			ips = append(ips, ipn.IP)
		}
	}
	return ips
}

// serveToken is the token kept at path, or a new random one when there is
// none that is ours (a regular file, 0600, holding a well-formed token).
func serveToken(path string) (string, error) {
	data, fi, err := readRegularFileInfo(path, 64<<10)
	if err == nil && fi.Mode().Perm() == 0o600 {
		var info serveInfo
		if json.Unmarshal(data, &info) == nil && validServeToken(info.Token) {
			return info.Token, nil
		}
	}
	if err := makeDirAll(filepath.Dir(path), 0o700); err != nil {
		return "", stateDirError(filepath.Dir(path), err)
	}
	b := make([]byte, serveTokenBytes)
	rand.Read(b)
	return hex.EncodeToString(b), nil
}

// serveTokenBytes is the token's length, in random bytes.
const serveTokenBytes = 24

// validServeToken reports whether t has a token's form: what serveToken
// makes.
func validServeToken(t string) bool {
	if len(t) != 2*serveTokenBytes {
		return false
	}
	_, err := hex.DecodeString(t)
	return err == nil
}

// portFlag is serve's --port: a whole number (its range is checked after
// parsing), refused in words that say what it wants, as the other numeric
// flags are.
type portFlag struct{ n int }

func (f *portFlag) String() string { return strconv.Itoa(f.n) }
func (f *portFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a port number (want 0 to 65535; 0: a free one)")
	}
	f.n = n
	return nil
}
