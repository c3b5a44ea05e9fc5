/* config.h - the service's YAML configuration: listen address, policy, state, hook secrets, accounts. */
#ifndef PG_SERVER_CONFIG_H
#define PG_SERVER_CONFIG_H

#include "common/buf.h"

/*
 * The schema is documented in docs/server.md.  Every key is optional: an
 * absent file or key keeps the embedded default (127.0.0.1:8080, the
 * built-in policy, the state in $PULLGATE_HOME, merge+build+boot+approve,
 * hook secrets generated on first start, no accounts).
 */
#define PG_CONFIG_MAX_SIZE ((size_t)256 << 10)
#define PG_CONFIG_MAX_ACCOUNTS 64
#define PG_CONFIG_MAX_REPOS 1024

/* A maintainer who may log in; hash as pg_auth_password_hash() writes it. */
typedef struct pg_account {
	char *name;
	char *hash;
} pg_account;

/* A push record's repository name and where pullgate fetches it from. */
typedef struct pg_repo_map {
	char *name;
	char *location;
} pg_repo_map;

/* The approval notice by SMTP (server/notify.c); no relay: nothing is mailed. */
typedef struct pg_notice_conf {
	char *relay;             /* host name or address */
	unsigned port;           /* 25 */
	char *from;              /* "Name <address>" or "address"; required with relay */
	unsigned attempts;       /* tries before the failure is recorded: 4 */
	unsigned retry_seconds;  /* before the second try, doubled each time: 30 */
	unsigned timeout_seconds; /* for each answer of the relay: 60 */
	char *tree_name;         /* X-PR-Merge-Tree, "torvalds/linux.git"; NULL: the tree's
				    directory name */
	char *commit_url;        /* the merge's public link is this and its hex id,
				    "https://git.kernel.org/torvalds/c/"; NULL: the id alone */
	/* not keys of the section: the tree and branch the notice checks, the service's own */
	char *tree;              /* the maintainer's tree's path */
	char *branch;            /* NULL: master */
} pg_notice_conf;
/* What one client, one request and one stored report may cost (docs/server.md, "Limits"). */
typedef struct pg_config_limits {
	unsigned connections;        /* open connections at once */
	unsigned per_address;        /* of them from one non-loopback address */
	unsigned header_timeout;     /* seconds for a request's line and headers */
	unsigned body_timeout;       /* seconds for its body */
	unsigned findings_per_check; /* stored per check and severity, the rest counted */
	size_t report_size;          /* bytes of a stored JSON report */
	unsigned login_backoff;      /* seconds a throttled log-in first waits (then doubled) */
	unsigned streams;            /* streamed answers open at once (at most half the connections) */
	unsigned streams_per_address; /* of them from one non-loopback address */
	unsigned stream_seconds;     /* how long one stream lasts before the service ends it */
	size_t index_cache_size;     /* bytes $PULLGATE_HOME/identity may hold (its LRU is pruned) */
	size_t index_memory;         /* the working memory of making an identity index */
	size_t verify_memory;        /* bytes of address space a verify's child process may take */
} pg_config_limits;

/*
 * intake.transparency: kernel.org's transparency log followed, each new
 * push of a watched repository's tag a job (server/intake.c,
 * docs/server.md "The transparency log as an intake").  log NULL: none.
 */
#define PG_INTAKE_URL_BASE "https://git.kernel.org/"
typedef struct pg_intake_conf {
	char *log;               /* the log's local clone: git/N.git under it */
	char **repos;            /* the kernel.org paths watched, as records name them */
	size_t nrepos;
	char **tags;             /* fnmatch(3) globs of the tag names; none: every tag */
	size_t ntags;
	char *url_base;          /* a job fetches url_base + repo + ".git" (unless
				    repositories.map names the repo); NULL: PG_INTAKE_URL_BASE */
	unsigned fetch_seconds;  /* between two reads of the log (each after a fetch) */
} pg_intake_conf;

/*
 * kcidb.submit: each decided run's KCIDB document POSTed to url with the
 * token of token-file (server/kcidb_submit.c, docs/kcidb.md).  url NULL:
 * nothing is sent.
 */
typedef struct pg_submit_conf {
	char *url;               /* https://, or http:// to a loopback host (pg_submit_why_url) */
	char *token;             /* read from token-file when the file is loaded: a secret */
	unsigned timeout_seconds; /* one POST, connection included: 30 */
	unsigned attempts;       /* tries before the failure is recorded: 5 */
	unsigned retry_seconds;  /* before the second try, doubled each time (at most an hour): 30 */
} pg_submit_conf;

/* The Host names allowed when the configuration names none (besides the listen address). */
#define PG_CONFIG_HOSTS "localhost", "127.0.0.1", "::1"

typedef struct pg_config {
	char *source;            /* the file, or "(built-in)" */
	char *address;           /* "127.0.0.1" */
	unsigned port;           /* 8080; 0 picks a free port */
	char **hosts;            /* names a request's Host may carry; none: PG_CONFIG_HOSTS */
	size_t nhosts;
	char *policy;            /* a policy file, or NULL for the built-in one */
	char *state;             /* where pullgate.db lives; NULL: $PULLGATE_HOME */
	char *push_secret;       /* NULL: generated in the state dir on first start */
	char *mail_secret;
	size_t max_body;         /* bytes a hook body may have */
	unsigned replay_window;  /* seconds a hook's signed timestamp may be off */
	char *repo_base;         /* push records: base + repo name, when not in repos */
	char *public_base;       /* push records: the public URL is this + repo name, for the
				    merge message and notice; NULL: git://git.kernel.org/ */
	char *tlog_web;          /* repositories.transparency-web: a public-inbox web view of the
				    policy's transparency log; a record's link is this + its
				    Message-Id (percent-encoded); NULL: records are not linked */
	pg_repo_map *repos;
	size_t nrepos;
	pg_account *accounts;
	size_t naccounts;
	unsigned stages;         /* pg_gate_stage flags run after verify */
	char *tree;              /* the maintainer's tree; NULL: $PULLGATE_HOME/linux */
	char *branch;            /* NULL: master */
	char *merge_name, *merge_email;
	char *attest_key;        /* attestation: the service's signing key; wins over the policy's */
	char *attest_gnupg_home; /* the GNUPGHOME holding it; NULL: $PULLGATE_HOME/gnupg */
	unsigned verify_workers; /* verifications that run at once */
	unsigned build_worktrees; /* kernel jobs that run at once, each in a build worktree */
	bool each_on_head;       /* pipeline.queue: each (every pull on the branch's head, tested
				    again when it moves); false: stack, the merge window's queue */
	unsigned session_hours;
	bool cookie_secure;      /* add Secure to the session cookie (behind TLS) */
	pg_notice_conf notice;
	pg_config_limits limits;
	char *kcidb_origin;      /* kcidb.origin: the origin of the KCIDB documents served;
				    PG_KCIDB_ORIGIN_DEFAULT */
	pg_submit_conf kcidb_submit; /* kcidb.submit */
	pg_intake_conf intake;   /* intake.transparency */
} pg_config;

/* The embedded defaults. *out is the caller's (pg_config_free). */
int pg_config_new_default(pg_config **out);

/*
 * Read a configuration file on top of the defaults.  Relative paths in it
 * are taken from the file's directory.  Errors: PG_ENOTFOUND, PG_EIO,
 * PG_ETOOBIG, PG_EINVALID ("FILE:LINE:COLUMN: what was expected").
 */
int pg_config_load(pg_config **out, const char *path);

/* As pg_config_load, from text; name is used in messages and for relative paths. */
int pg_config_parse(pg_config **out, const char *text, size_t len, const char *name);

/* Zeroes the secrets before freeing them. NULL-safe. */
void pg_config_free(pg_config *c);

/* Free what the intake section holds, and empty it. */
void pg_intake_conf_release(pg_intake_conf *k);

/* The location a push record's repository name maps to (appended to out); PG_ENOTFOUND when none. */
int pg_config_repo_location(pg_buf *out, const pg_config *c, const char *name);

/*
 * The location a job of the intake fetches a watched repository from
 * (appended to out): its repositories.map entry, else intake's url-base,
 * the name and ".git".  PG_EINVALID for a name that is no plain path.
 */
int pg_config_intake_location(pg_buf *out, const pg_config *c, const char *name);

#endif
