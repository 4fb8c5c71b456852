package sqltest

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// failSQL is what the proxy runs on the server instead of a statement it
// fails: a real serialization failure (SQLSTATE 40001) raised by PostgreSQL,
// which aborts the real transaction as a real one would.
const failSQL = `DO $$BEGIN RAISE EXCEPTION 'serialization failure injected by the fault proxy' USING ERRCODE = '40001'; END$$`

// Proxy is a PostgreSQL wire protocol proxy that injects faults between the
// store and the database: it drops a connection after a COMMIT reached the
// server and the server committed (the ambiguity of a commit whose answer
// is lost), fails chosen statements with a serialization failure raised by
// the server itself, and stalls chosen statements. Without a fault it
// relays every message unchanged. It speaks pgproto3, the protocol library
// of pgx.
type Proxy struct {
	// URL is the database's URL with the proxy's address.
	URL string

	upstream string
	ln       net.Listener

	mu     sync.Mutex
	faults []*fault
	// commitsDropped counts connections dropped after the server answered
	// their COMMIT with COMMIT (a commit that happened).
	commitsDropped int
	// commits counts the COMMITs clients sent, and the Syncs that commit an
	// implicit transaction that wrote.
	commits int
	// roundTrips counts the messages a client then waits on the answer of:
	// Syncs, and simple Queries.
	roundTrips int
	conns      map[net.Conn]struct{}
	wg         sync.WaitGroup
	// emulate and dropCancels are set before the first connection
	// (EmulateCockroachSessions, DropCancelRequests); emulated counts the
	// statements rewritten.
	emulate, dropCancels bool
	emulated             map[string]int
}

// CockroachSessionStatements are the statements by which the store names,
// ends and watches a CockroachDB session, each with what a proxy that
// EmulateCockroachSessions runs on PostgreSQL instead: a session's id is
// its backend's process id and start, which no later backend shares.
var CockroachSessionStatements = map[string]string{
	"SHOW session_id": "SELECT pid::TEXT || '@' || backend_start::TEXT AS session_id FROM pg_stat_activity WHERE pid = pg_backend_pid()",
	"CANCEL SESSION IF EXISTS $1": "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " +
		"WHERE pid::TEXT || '@' || backend_start::TEXT = $1::TEXT",
	"SELECT EXISTS (SELECT 1 FROM crdb_internal.cluster_sessions WHERE session_id = $1)": "SELECT EXISTS (SELECT 1 FROM pg_stat_activity " +
		"WHERE pid::TEXT || '@' || backend_start::TEXT = $1::TEXT)",
}

// EmulateCockroachSessions makes the proxy run, for each of
// CockroachSessionStatements, PostgreSQL's equivalent: the store's fence of
// a CockroachDB session in doubt then ends a real backend. Call it before
// the first connection.
func (p *Proxy) EmulateCockroachSessions() { p.emulate = true }

// DropCancelRequests makes the proxy drop PostgreSQL's cancel requests, as
// a lost packet would: a backend the client gave up on then runs on. Call
// it before the first connection.
func (p *Proxy) DropCancelRequests() { p.dropCancels = true }

// Emulated answers how many times EmulateCockroachSessions rewrote sql.
func (p *Proxy) Emulated(sql string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.emulated[sql]
}

// rewrite answers what the server runs for sql.
func (p *Proxy) rewrite(sql string) string {
	if !p.emulate {
		return sql
	}
	pg, ok := CockroachSessionStatements[sql]
	if !ok {
		return sql
	}
	p.mu.Lock()
	p.emulated[sql]++
	p.mu.Unlock()
	return pg
}

type faultKind int

const (
	dropAfterCommit faultKind = iota
	failStatement
	stallStatement
)

// fault is one armed fault: it applies to the next n statements match
// accepts (COMMITs for dropAfterCommit).
type fault struct {
	kind  faultKind
	match func(sql string) bool
	skip  int // matching statements let through first
	n     int
	stall time.Duration
}

// StartProxy starts a proxy in front of the database at dbURL, closed when
// the test ends.
func StartProxy(t testing.TB, dbURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("proxy: parse %q: %v", dbURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{upstream: u.Host, ln: ln, conns: map[net.Conn]struct{}{}, emulated: map[string]int{}}
	u.Host = ln.Addr().String()
	p.URL = u.String()
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// DropAfterCommit makes the next n COMMITs reach the server, then drops
// their connection once the server has answered, before the client reads
// the answer. A Sync that ends an implicit transaction (a pipeline without
// BEGIN, outside any transaction) in which a statement wrote the store's
// rows (weft_kv: a group's commit, not a migration's step) is a COMMIT
// here: its connection is dropped once the server answered the Sync.
func (p *Proxy) DropAfterCommit(n int) { p.DropCommitAfter(0, n) }

// DropCommitAfter lets skip COMMITs through, then does what DropAfterCommit
// does to the next n.
func (p *Proxy) DropCommitAfter(skip, n int) {
	p.arm(&fault{kind: dropAfterCommit, match: isCommit, skip: skip, n: n})
}

// Commits answers how many COMMITs clients sent through the proxy (the
// Syncs of implicit transactions that wrote the store's rows included).
func (p *Proxy) Commits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commits
}

// RoundTrips answers how many times a client sent what it then waits on the
// server's answer to: a Sync (the end of an extended-protocol pipeline,
// however many statements it holds) or a simple Query.
func (p *Proxy) RoundTrips() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.roundTrips
}

func (p *Proxy) roundTrip() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roundTrips++
}

// FailStatements makes the next n statements match accepts fail with a
// serialization failure (SQLSTATE 40001) raised by the server.
func (p *Proxy) FailStatements(match func(sql string) bool, n int) {
	p.arm(&fault{kind: failStatement, match: match, n: n})
}

// StallStatements holds the next n statements match accepts for d before
// sending them on.
func (p *Proxy) StallStatements(match func(sql string) bool, n int, d time.Duration) {
	p.arm(&fault{kind: stallStatement, match: match, n: n, stall: d})
}

// CommitsDropped answers how many connections were dropped after their
// COMMIT committed.
func (p *Proxy) CommitsDropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commitsDropped
}

// Armed answers how many statements the armed faults still apply to.
func (p *Proxy) Armed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, f := range p.faults {
		n += f.n
	}
	return n
}

func (p *Proxy) arm(f *fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
}

// take answers the fault that applies to sql, spending one of its uses.
func (p *Proxy) take(sql string) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if isCommit(sql) {
		p.commits++
	}
	for _, f := range p.faults {
		if f.n <= 0 || !f.match(sql) {
			continue
		}
		if f.skip > 0 {
			f.skip--
			continue
		}
		f.n--
		return f
	}
	return nil
}

// Close stops the proxy and drops every connection.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serve(client) })
	}
}

// isCommit reports a statement that commits a transaction.
func isCommit(sql string) bool { return strings.EqualFold(strings.TrimSpace(sql), "commit") }

// session is one client connection and its server connection.
type session struct {
	p              *Proxy
	client, server net.Conn
	fe             *pgproto3.Frontend // speaks to the server
	be             *pgproto3.Backend  // speaks to the client
	statements     map[string]string  // prepared statement name → SQL

	mu sync.Mutex
	// pending is what the server will answer, in order, for the messages
	// sent so far: a Parse's ParseComplete (to forward or, for a Parse the
	// proxy added, to swallow) and each Sync's or Query's ReadyForQuery.
	pending []answer
	// dropping is set once a COMMIT to be dropped was sent: nothing more
	// reaches the client, and the connection is dropped once the server
	// answers the COMMIT (atReady: the Sync of an implicit transaction).
	dropping, atReady bool
	// failed is set when the server answered an error after the drop was
	// armed: the implicit transaction did not commit.
	failed bool
	// txStatus is the server's last ReadyForQuery status ('I': outside any
	// transaction); writes and begins say whether the statements since the
	// last Sync wrote and began a transaction (toServer's only).
	txStatus       byte
	writes, begins bool
}

type answer int

const (
	parseForward answer = iota
	parseSwallow
	ready
)

func (p *Proxy) serve(client net.Conn) {
	p.track(client, true)
	defer p.track(client, false)
	defer client.Close()
	be := pgproto3.NewBackend(client, client)
	startup, err := receiveStartup(client, be)
	if err != nil {
		return
	}
	if _, cancel := startup.(*pgproto3.CancelRequest); cancel && p.dropCancels {
		return
	}
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	p.track(server, true)
	defer p.track(server, false)
	defer server.Close()
	s := &session{p: p, client: client, server: server, fe: pgproto3.NewFrontend(server, server), be: be,
		statements: map[string]string{}}
	s.fe.Send(startup)
	if s.fe.Flush() != nil {
		return
	}
	if _, cancel := startup.(*pgproto3.CancelRequest); cancel {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.toClient()
		_ = client.Close() // ends toServer's wait for the client
		_ = server.Close()
	}()
	s.toServer()
	_ = server.Close()
	_ = client.Close()
	<-done
}

// receiveStartup reads the client's startup message, declining TLS.
func receiveStartup(client net.Conn, be *pgproto3.Backend) (pgproto3.FrontendMessage, error) {
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return nil, err
		}
		switch msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := client.Write([]byte{'N'}); err != nil {
				return nil, err
			}
		default:
			return msg, nil
		}
	}
}

// toServer relays the client's messages, applying the faults.
func (s *session) toServer() {
	for {
		msg, err := s.be.Receive()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.Parse:
			s.statements[m.Name] = m.Query
			s.expect(parseForward)
			if q := s.p.rewrite(m.Query); q != m.Query {
				msg = &pgproto3.Parse{Name: m.Name, Query: q, ParameterOIDs: m.ParameterOIDs}
			}
		case *pgproto3.Sync:
			s.expect(ready)
			s.p.roundTrip()
			s.syncing()
		case *pgproto3.Query:
			s.expect(ready)
			s.p.roundTrip()
			if f := s.apply(m.String); f != nil && f.kind == failStatement {
				msg = &pgproto3.Query{String: failSQL}
			} else if q := s.p.rewrite(m.String); q != m.String {
				msg = &pgproto3.Query{String: q}
			}
		case *pgproto3.Bind:
			sql := s.statements[m.PreparedStatement]
			s.writes = s.writes || writesRows(sql)
			s.begins = s.begins || isBegin(sql)
			if f := s.apply(sql); f != nil && f.kind == failStatement {
				s.expect(parseSwallow)
				s.fe.Send(&pgproto3.Parse{Query: failSQL})
				msg = &pgproto3.Bind{DestinationPortal: m.DestinationPortal}
			}
		}
		s.fe.Send(msg)
		if s.fe.Flush() != nil {
			return
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return
		}
	}
}

// syncing books a Sync about to be sent: when it commits an implicit
// transaction that wrote, it is a COMMIT to the faults (DropAfterCommit).
func (s *session) syncing() {
	s.mu.Lock()
	implicit := s.txStatus == 'I' && s.writes && !s.begins
	s.mu.Unlock()
	s.writes, s.begins = false, false
	if !implicit {
		return
	}
	if f := s.p.take(implicitCommit); f != nil {
		switch f.kind {
		case stallStatement:
			time.Sleep(f.stall)
		case dropAfterCommit:
			s.mu.Lock()
			s.dropping, s.atReady, s.failed = true, true, false
			s.mu.Unlock()
		}
	}
}

// implicitCommit is what the faults see of a Sync that commits an implicit
// transaction.
const implicitCommit = "COMMIT"

// writesRows reports a statement that writes the store's rows.
func writesRows(sql string) bool {
	return isWrite(sql) && strings.Contains(sql, "weft_kv")
}

// isWrite reports a statement that writes rows.
func isWrite(sql string) bool {
	sql = strings.ToUpper(strings.TrimSpace(sql))
	for _, verb := range []string{"INSERT", "UPSERT", "MERGE", "UPDATE", "DELETE"} {
		if strings.HasPrefix(sql, verb) {
			return true
		}
	}
	return false
}

// isBegin reports a statement that begins a transaction.
func isBegin(sql string) bool {
	return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(sql)), "BEGIN")
}

// apply answers the fault that applies to a statement about to run, after
// stalling it or arming the drop of its connection.
func (s *session) apply(sql string) *fault {
	f := s.p.take(sql)
	if f == nil {
		return nil
	}
	switch f.kind {
	case stallStatement:
		time.Sleep(f.stall)
	case dropAfterCommit:
		s.mu.Lock()
		s.dropping = true
		s.mu.Unlock()
	}
	return f
}

func (s *session) expect(a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, a)
}

// toClient relays the server's messages, swallowing the answers to the
// messages the proxy added, and drops the connection after a dropped
// COMMIT's answer.
func (s *session) toClient() {
	for {
		msg, err := s.fe.Receive()
		if err != nil {
			return
		}
		forward, drop := s.answered(msg)
		if drop {
			return
		}
		if !forward {
			continue
		}
		s.be.Send(msg)
		if s.be.Flush() != nil {
			return
		}
	}
}

// answered books msg against what was pending and answers whether to
// forward it, and whether to drop the connection now.
func (s *session) answered(msg pgproto3.BackendMessage) (forward, drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m := msg.(type) {
	case *pgproto3.ParseComplete:
		forward = true
		if len(s.pending) > 0 {
			a := s.pending[0]
			s.pending = s.pending[1:]
			forward = a != parseSwallow
		}
	case *pgproto3.ReadyForQuery:
		s.txStatus = m.TxStatus
		if s.dropping && s.atReady {
			if !s.failed {
				s.p.mu.Lock()
				s.p.commitsDropped++
				s.p.mu.Unlock()
			}
			return false, true
		}
		for len(s.pending) > 0 {
			a := s.pending[0]
			s.pending = s.pending[1:]
			if a == ready {
				break
			}
		}
		forward = true
	case *pgproto3.ErrorResponse:
		forward = true
		s.failed = s.failed || s.atReady
	case *pgproto3.CommandComplete:
		forward = true
		tag := string(m.CommandTag)
		if s.dropping && !s.atReady && (tag == "COMMIT" || tag == "ROLLBACK") {
			if tag == "COMMIT" {
				s.p.mu.Lock()
				s.p.commitsDropped++
				s.p.mu.Unlock()
			}
			return false, true
		}
	default:
		forward = true
	}
	return forward && !s.dropping, false
}
