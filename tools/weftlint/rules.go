package main

// The import rules: one row per package (or package pattern), checked in
// order, the first row whose pattern matches a package being its rule. Each
// row restates the "Layering:" paragraph of that package's doc.go; change the
// two together.
//
// A pattern is a path relative to the module ("store", "engine/..." for engine
// and everything below it), a path outside it whose first element has a dot
// ("github.com/redis/go-redis/v9/..."), or std (the standard library).
var rules = []rule{
	// The storage seam and its backends.
	{pkg: "store", allow: list(std)},
	{pkg: "store/memstore", allow: list(std, "store")},
	{pkg: "store/faultstore", allow: list(std, "store", "internal/clock")},
	{pkg: "store/nocasstore", allow: list(std, "store", "store/memstore")},
	{pkg: "store/pebblestore", allow: list(std, "store", "github.com/cockroachdb/pebble/v2/...")},
	{pkg: "store/sqlstore", allow: list(std, "store", "internal/clock", "github.com/jackc/pgx/v5/...", "github.com/cockroachdb/cockroach-go/v2/...")},
	{pkg: "store/sqlstore/sqltest", allow: list(std, "store/sqlstore", "github.com/jackc/pgx/v5/...")},
	{pkg: "store/...", deny: list("engine/...", "server/...")},

	// Leases and wake-ups: interfaces on the standard library, Redis beside.
	{pkg: "lease", allow: list(std)},
	{pkg: "lease/redislease", allow: list(std, "lease", goRedis)},
	{pkg: "wake", allow: list(std)},
	{pkg: "wake/rediswake", allow: list(std, "wake", goRedis)},

	// The engine: the domain. Its pure packages see no storage; none of it
	// sees the transport, tests included.
	{pkg: "engine/definition", deny: list(engineRoot, "engine/runstate", "store/...", "lease/...", "wake/...", "export/...", "server/...", "gen/...")},
	{pkg: "engine/internal/dispatch", allow: list(std), deny: list("server/...")},
	{pkg: "engine/keyspace", allow: list(std, "store"), deny: list("server/...")},
	{pkg: "engine/internal/decide", allow: list(std, "engine/definition", "engine/runstate"), deny: list("server/...")},
	{pkg: "engine/internal/budget", allow: list(std, "engine/runstate"), deny: list("server/...")},
	{pkg: "engine/runlog", allow: list(std, "store", "engine/keyspace", "engine/runstate", "engine/runcodec", "internal/reuse"), deny: list("server/...")},
	{pkg: "engine/internal/pollers", allow: list(std, "store", "engine/keyspace"), deny: list("server/...")},
	{pkg: "engine/internal/cache", allow: list(std, "store", "engine/runstate", "engine/runlog", "engine/internal/record", "engine/internal/dispatch",
		"engine/internal/fault"), deny: list("server/...")},
	{pkg: "engine/internal/fault", allow: list(std, "engine/definition", "engine/runstate", "engine/eventpb", "engine/internal/decide"),
		deny: list("server/...")},
	{pkg: "engine/internal/queues", allow: list(std, "store", "engine/keyspace", "engine/internal/dispatch", "engine/internal/pollers", "engine/internal/record"),
		deny: list("server/...")},
	{pkg: "engine/internal/acceptance", allow: list(std, "store", "engine/keyspace", "engine/runstate"), deny: list("server/...")},
	{pkg: "engine/internal/record", allow: list(std, "store", "engine/keyspace", "engine/definition", "engine/runstate", "engine/runcodec", "engine/runquery"), deny: list("server/...")},
	{pkg: "engine/internal/retention", allow: list(std, "store", "engine/keyspace"), deny: list("server/...")},
	{pkg: "engine/internal/admission", allow: list(std, "store", "engine/keyspace"), deny: list("server/...")},
	{pkg: "engine/internal/ownership", allow: list(std, "store"), deny: list("server/...")},
	{pkg: "engine/expr", allow: list(std, "cel.dev/cel-go/..."), deny: list("server/...")},
	{pkg: "engine/flowcontrol", allow: list(std), deny: list("server/...")},
	{pkg: "engine/runquery", allow: list(std, "engine/runstate"), deny: list("server/...")},
	{pkg: "engine/runstate", deny: list(engineRoot, "store/...", "lease/...", "wake/...", "export/...", "server/...", "gen/...")},
	{pkg: "engine/runcodec", allow: list(std, "engine/definition", "engine/runstate", "google.golang.org/protobuf/encoding/protowire",
		"github.com/klauspost/compress/s2"),
		deny: list("server/...")},
	{pkg: "engine/eventpb", allow: list(std, "engine/definition", "engine/runstate", "internal/protorules", "internal/jsonvalue", "gen/...", "buf.build/...",
		"google.golang.org/protobuf/..."),
		deny: list("server/...")},
	{pkg: "engine/...", allow: list(std, "engine/...", "store", "lease", "wake", "internal/clock", "internal/reuse", "github.com/google/uuid", "go.yaml.in/yaml/v3"),
		deny: list("server/...")},

	// Around the engine.
	{pkg: "export", allow: list(std, "engine/keyspace", "engine/runlog", "engine/runcodec", "engine/runstate", "store", "telemetry", "internal/clock", "internal/reuse", "go.opentelemetry.io/otel/metric/...")},
	{pkg: "export/redisbus", allow: list(std, "export", "store", goRedis)},
	{pkg: "telemetry", allow: list(std, "go.opentelemetry.io/...", "github.com/prometheus/...")},
	{pkg: "server/wiretest", allow: list(std, "gen/...", "connectrpc.com/connect", "google.golang.org/genproto/...", "google.golang.org/protobuf/...")},
	{pkg: "schedule", allow: list(std, "engine/...", "store", "github.com/robfig/cron/v3")},
	{pkg: "batch", allow: list(std, "engine", "internal/clock", "engine/runstate", "engine/keyspace", "store", "github.com/google/uuid"), deny: list("server/...")},
	{pkg: "audit", allow: list(std, "store", "engine/keyspace")},
	{pkg: "view", allow: list(std, "store", "engine/keyspace"), deny: list("server/...")},
	{pkg: "server", allow: list(std, "audit", "batch", "view", "engine/...", "schedule", "internal/jsonvalue", "internal/protorules", "gen/...", "telemetry", "console", "connectrpc.com/...", "buf.build/...",
		"google.golang.org/protobuf/...", "google.golang.org/genproto/...", "github.com/google/uuid", "github.com/rs/cors", "go.opentelemetry.io/otel/...",
		"github.com/coreos/go-oidc/v3/...", "github.com/go-jose/go-jose/v4/...", "golang.org/x/oauth2", "internal/tlstest", "internal/oidctest", "internal/testkit/loop")},
	{pkg: "console", allow: list(std)},

	// The public API's clients: they speak to Weft only over the wire.
	{pkg: "client", allow: list(std, "internal/clock", "gen/...", "connectrpc.com/connect", "buf.build/gen/...", "google.golang.org/protobuf/...", otelAPI)},
	{pkg: "client/worker", allow: list(std, "client", "internal/clock", "internal/jsonvalue", "gen/...", "google.golang.org/protobuf/...", otelAPI)},
	{pkg: "conformance", allow: list()},
	{pkg: "conformance/storetest", allow: list(std, "store", testify)},
	{pkg: "conformance/apitest", allow: list(std, "gen/...", "connectrpc.com/connect", "buf.build/gen/...", "google.golang.org/protobuf/...", testify)},
	{pkg: "examples/...", allow: list(std, "client/...", "examples/...")},

	// Shared pieces.
	{pkg: "internal/clock", allow: list(std)},
	{pkg: "internal/reuse", allow: list(std)},
	{pkg: "internal/jsonvalue", allow: list(std, "google.golang.org/protobuf/types/known/structpb")},
	{pkg: "internal/redisconn", allow: list(std, goRedis)},
	{pkg: "internal/redistest", allow: list(std, "internal/redisconn", goRedis, "github.com/google/uuid")},
	{pkg: "internal/tlstest", allow: list(std)},
	{pkg: "internal/testkit/fill", allow: list(std)},
	{pkg: "internal/testkit/loop", allow: list(std, "engine", testify)},
	{pkg: "internal/testkit", allow: list(std, "batch", "view", "client", "engine", "schedule", "server", "store", "store/memstore", "store/sqlstore/sqltest",
		"internal/redistest", "internal/testkit/loop", testify)},
	{pkg: "internal/oidctest", allow: list(std, "github.com/go-jose/go-jose/v4/...", "github.com/zitadel/oidc/v3/...", "golang.org/x/text/language")},
	{pkg: "internal/protorules", allow: list(std, "buf.build/gen/...", "google.golang.org/protobuf/...")},
	{pkg: "internal/eventschema", allow: list(std, "gen/...", "buf.build/gen/...", "google.golang.org/protobuf/...")},
	{pkg: "gen/...", deny: list("engine/...", "store/...", "server/...", "client/...")},

	// The benchmark speaks to a weftd over the public API, and opens a stopped
	// weftd's store to fill it; it never sees the server.
	{pkg: "bench/fill", allow: list(std, "store", "engine/...", "github.com/google/uuid")},
	{pkg: "bench", allow: list(std, "engine/keyspace", "bench/fill", "client/...", "gen/...", "store", "store/pebblestore", "store/sqlstore",
		"internal/redisconn", goRedis, "github.com/jackc/pgx/v5/...", "github.com/cockroachdb/pebble/v2/...")},
	{pkg: "bench/...", deny: list("server/...")},

	// Programs wire everything together.
	{pkg: "cmd/...", allow: nil},
	{pkg: "tools/...", allow: nil},

	// Anything else (a new package): the transport stays out of it.
	{pkg: "...", deny: list("server/...")},
}

// Patterns the table uses more than once.
const (
	std        = "std"
	engineRoot = "engine"
	goRedis    = "github.com/redis/go-redis/v9/..."
	testify    = "github.com/stretchr/testify/..."
	// otelAPI is OpenTelemetry: the clients import its API only (trace,
	// propagation, attribute, codes); their tests, the SDK.
	otelAPI = "go.opentelemetry.io/otel/..."
)

// pending are imports that break a rule today and have an issue to remove
// them. They are reported, not failed; a pending entry that no longer
// happens is reported too, so that it is deleted.
var pending = []exception{}

func list(patterns ...string) []string {
	if patterns == nil {
		return []string{}
	}
	return patterns
}
