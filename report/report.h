/* report.h - a verdict as data: findings with details, rendered as text or JSON. */
#ifndef PG_REPORT_H
#define PG_REPORT_H

#include "common/buf.h"
#include "common/checks.h"
#include "common/map.h"
#include "repo/object.h"

/*
 * A detail is one field of a finding, with what the pull has and what
 * upstream (or the description) has; either side may be NULL.  All strings
 * are owned by the finding and may hold anything a repository holds:
 * renderers sanitize or escape them.
 */
typedef struct pg_detail {
	char *field;
	char *pull;
	char *upstream;
} pg_detail;

typedef struct pg_finding {
	enum pg_check_id check;
	enum pg_severity severity;
	bool has_commit;
	pg_oid commit;
	char *subject;      /* the commit's subject, or NULL */
	bool has_upstream;
	pg_oid upstream;    /* the upstream original, for rewritten-upstream */
	char *message;      /* one line saying what is wrong */
	pg_detail *details;
	size_t ndetails, details_alloc;
	/*
	 * 0: a root cause.  Else 1 + the index of the finding this one follows
	 * from (verifier/story.c): a foreign committer, a missing sign-off... on
	 * a rewritten copy are what the rewrite did, not separate problems.
	 */
	size_t implied_by;
	/*
	 * It follows from the rewritten-upstream finding of its commit, but
	 * that one was counted past the policy's cap, not listed (implied_by
	 * is 0): no root cause either.
	 */
	bool implied_unlisted;
} pg_finding;

/*
 * A fact that is no finding: it neither rejects nor warns, but a
 * maintainer reading the report should know it (a pull commit that
 * re-applies an upstream change with a different patch).  Strings are
 * owned by the report.
 */
typedef struct pg_note {
	enum pg_check_id check; /* the check that noticed it */
	bool has_commit;
	pg_oid commit;
	char *subject;
	bool has_upstream;
	pg_oid upstream;
	char *message;
} pg_note;

/* The story a report leads with (verifier/story.c fills it after the checks). */
typedef struct pg_summary {
	size_t rewritten;         /* pull commits that re-create an upstream commit */
	size_t rewritten_merges;  /* how many of them are merges */
	size_t dropped_mergetags; /* the signed tags (mergetag headers) those copies lost */
	size_t quoted_ids;        /* commit ids quoted in their messages that the rewrite changed */
	size_t reapplied;         /* upstream changes applied anew, not copied (notes) */
	size_t own;               /* commits the pull should carry once the copies are removed */
} pg_summary;

/*
 * A signature that was checked: the pulled tag's, or a mergetag's in one of
 * the pull's merges.  Every checked signature is listed, good or not, so
 * that a report says who signed what; findings say what is wrong.  Strings
 * are owned by the report.
 */
typedef struct pg_signature_info {
	bool mergetag;      /* false: the pulled tag */
	bool has_commit;
	pg_oid commit;      /* the merge that carries the mergetag */
	char *tag;          /* the name in the tag's own tag header */
	char *tagger;       /* "Name <email>", or NULL */
	char *status;       /* "good", "bad", "no-key"... (verifier/gpg.h) */
	char *fingerprint;  /* the key's primary fingerprint, else the key id the
			     * signature names, or NULL */
	char **emails;      /* the key's user-id e-mail addresses */
	size_t nemails;
} pg_signature_info;

/* One stage of `pullgate gate`: verify, merge, build, boot, approve. */
enum pg_stage_status {
	PG_STAGE_PASSED,
	PG_STAGE_FAILED,   /* the pull is bad at this stage: findings say why */
	PG_STAGE_ERROR,    /* the stage could not run: pullgate could not decide */
	PG_STAGE_SKIPPED,
	PG_STAGE_WAITING,  /* approval waits for the maintainer */
};

typedef struct pg_stage {
	char *name;
	enum pg_stage_status status;
	uint64_t elapsed_ms;
	char *log;         /* path of the stage's log, or NULL */
	char *summary;     /* one line, or NULL */
} pg_stage;

const char *pg_stage_status_name(enum pg_stage_status s);

/* A file a stage ran or read, and whether it is the one this pullgate was built with. */
typedef struct pg_prov_file {
	char *path;
	char *sha256;         /* 64 hex digits; NULL when it could not be read */
	bool shipped;         /* its content is the shipped file's (pg_shipped_files) */
} pg_prov_file;

/*
 * How one stage's result came about, recorded by the gate: the scripts it
 * ran with their SHA-256, the tools, what was built and booted.  Strings
 * are owned by the report; NULL when not recorded.
 */
typedef struct pg_provenance {
	char *stage;          /* "build", "boot" or "base-boot" */
	pg_prov_file *files;
	size_t nfiles, files_alloc;
	char *tree;           /* the git tree id of the source built or booted */
	char *toolchain;      /* the cross compiler's version line */
	char *qemu;           /* qemu-system-aarch64's version line */
	char *config_sha256;  /* of the build's .config */
	char *image_sha256;   /* of arch/arm64/boot/Image, as built or as booted */
	char *nonce;          /* boot: the nonce on the kernel command line */
	char *log;            /* the console or build log */
	/* build: what build.sh said the icecream farm did, its text made safe (pipeline/farm.h) */
	char *farm_env;       /* "ENV: CARRIES": the compiler environment sent, by id, and its contents */
	char *farm;           /* the other lines (hosts, here, failures, warnings, the total), "; " between */
	int exit_status;      /* the script's exit status; -1: killed or not run */
	bool cached;          /* base-boot: a boot of the same base, kept from before */
	bool simulated;       /* a file is not the shipped one: a stand-in ran */
} pg_provenance;

/* Leaf results of one KUnit suite. */
typedef struct pg_suite_counts {
	size_t passed, failed, skipped, crashed;
} pg_suite_counts;

/* One suite on the base and on the merge (the boot stage's comparison). */
typedef struct pg_suite_result {
	char *name;
	bool on_base, on_merge;
	pg_suite_counts base, merge;
	char *verdict;        /* "ok", "new-failures", "pre-existing", "vanished", "added" */
} pg_suite_result;

/* What became of a config option the pull's changed paths selected (pipeline/select.c). */
enum pg_selected_status {
	PG_SELECTED_ADDED,    /* requested on top of the base configuration (not built yet) */
	PG_SELECTED_ENABLED,  /* requested, and the built .config has it */
	PG_SELECTED_SKIPPED,  /* requested, and Kconfig left it unset (reason) */
	PG_SELECTED_IN_BASE,  /* the base configuration sets it already: the base's value holds */
	PG_SELECTED_CAPPED,   /* over the policy's kunit-select-max */
	PG_SELECTED_REFUSED,  /* a line pullgate does not take from a pull (reason) */
};

const char *pg_selected_status_name(enum pg_selected_status s);

/* One option the selection looked at, the changed path that selected it and its fate. */
typedef struct pg_selected {
	char *option;         /* "CONFIG_EXT4_KUNIT_TESTS" */
	char *path;           /* the first changed path that selected it */
	char *source;         /* the file it came from: "fs/ext4/.kunitconfig", "lib/Kconfig.debug" */
	char *depends;        /* its Kconfig entry's "depends on", or NULL */
	char *reason;         /* why it was skipped, capped, refused or kept; or NULL */
	char *suites;         /* the KUnit suites its sources declare, space-separated; or NULL */
	bool test;            /* a test option: counted against the cap */
	enum pg_selected_status status;
} pg_selected;

/*
 * The transparency check's evidence (docs/transparency.md): the push record
 * that made the pulled tag's name point at the tag object.  Strings are
 * owned by the report and are the log's, as read: renderers escape them.
 */
typedef struct pg_tlog_evidence {
	char *message_id;     /* "<id@host>" as the record's Message-Id has it, or NULL */
	char *date;           /* its Date (when gitolite received the push), or NULL */
	char *pushed_by;      /* the account that pushed */
	char *repo;           /* the repository it names (a kernel.org path) */
	bool certified;       /* a signed push certificate verified for the tag */
} pg_tlog_evidence;

enum pg_verdict {
	PG_VERDICT_ACCEPT = 0,
	PG_VERDICT_REJECT = 1,
};

typedef struct pg_report {
	char *repo;          /* as given */
	char *policy_sha256; /* of the policy file verify read (pg_policy.sha256); or NULL */
	char *tag;           /* the full ref, refs/tags/... */
	char *upstream;
	char *upstream_ref;
	pg_oid tag_object;   /* the tag object, or the commit for a lightweight tag */
	int64_t tag_time;    /* the tagger's date, 0 when there is none */
	int tag_offset;
	pg_oid tag_commit;
	pg_oid upstream_tip;
	size_t ncommits;     /* commits in the pull */
	size_t nmerges;
	size_t upstream_examined; /* upstream commits the analysis looked at */
	int64_t upstream_since;   /* of which: every one committed since then (a date window) */
	const char *upstream_index; /* NULL: no identity index (the date window was walked);
				       else "current", "extended", or "built (new)",
				       "built (rewritten)", "built (key)", "built (graph)",
				       "built (damaged)" */
	size_t upstream_indexed;    /* the commits the index holds */
	size_t upstream_index_added; /* of which: read and added this time */
	bool no_keyring;          /* no keyring was given: signatures were not checked */
	bool has_summary;         /* summary is filled (verify examined commits) */
	pg_summary summary;
	pg_note *notes;
	size_t nnotes, notes_alloc;
	pg_finding *findings;
	size_t nfindings, findings_alloc;
	pg_signature_info *signatures;
	size_t nsignatures, signatures_alloc;
	pg_stage *stages;    /* empty for a plain verify */
	size_t nstages, stages_alloc;
	bool has_merge;
	pg_oid merge_base;   /* the integration head the merge was made on */
	pg_oid merge_commit; /* the tested merge, once the merge stage made it */
	bool approved;       /* the integration branch moved to merge_commit */
	/*
	 * At most max_per_check findings of one check are kept (0: all, the
	 * default; pg_verify sets the policy's max-findings-per-check); the
	 * rest are only counted, by check and severity, in omitted.
	 */
	size_t max_per_check;
	size_t kept[PG_CHECK__COUNT];
	size_t omitted[PG_CHECK__COUNT][PG_SEV_ERROR + 1];
	/* of those, the ones on a rewritten copy that follow from it (no root causes) */
	size_t omitted_implied[PG_CHECK__COUNT][PG_SEV_ERROR + 1];
	/*
	 * The pull's rewritten copies, listed or not (pg_report_mark_copy):
	 * commit id -> 1 + the severity of its rewritten-upstream finding.
	 */
	pg_map copies;
	pg_oid **copy_ids;  /* the map's keys */
	size_t ncopies, copies_alloc;

	/* the gate's evidence (docs/report-schema.md, "Evidence and provenance") */
	char *tag_signer;    /* the trusted signer's fingerprint when the tag's signature
				verified good with no tag-signature finding; else NULL */
	pg_tlog_evidence *tlog_evidence; /* the transparency log's evidence, or NULL: none found
					(no log, no record of the tag object) */
	char *run_dir;       /* the run's fresh log directory */
	bool simulated;      /* a stage ran a stand-in instead of a shipped script */
	pg_provenance *provenance;
	size_t nprovenance, provenance_alloc;
	pg_suite_result *suites;
	size_t nsuites, suites_alloc;
	char *base_boot;     /* one line on the base's boot, or NULL when none */
	char *attestation;   /* approved: one line on the signed note on the merge
				(docs/attestation.md), also when there is none; else NULL */

	/* the pull-aware KUnit selection (docs/kernel.md), when one was made */
	bool has_selection;
	pg_selected *selected;
	size_t nselected, selected_alloc;
	size_t selection_paths; /* changed paths it looked at */
	unsigned selection_cap; /* the policy's kunit-select-max */
	char *selection_note;   /* one line: what the selection adds, or why nothing */
} pg_report;

int pg_report_new(pg_report **out);
void pg_report_free(pg_report *r);

/*
 * Add a finding; *out (optional) is borrowed and valid until the next add.
 * commit may be NULL.  A finding with PG_SEV_OFF is not added (*out NULL);
 * nor is one past the report's max_per_check for its check, which is
 * counted in omitted (*out NULL).
 */
int pg_report_add(pg_finding **out, pg_report *r, enum pg_check_id check,
		  enum pg_severity sev, const pg_commit *commit, const char *fmt, ...)
	PG_PRINTF(6, 7);

/*
 * Whether a finding of check on a rewritten copy is what the rewrite did
 * (a foreign committer, a missing sign-off, a back-merge, an odd date):
 * it follows from the copy's rewritten-upstream finding.
 */
bool pg_check_follows_from_copy(enum pg_check_id check);

/*
 * Record that commit is a rewritten copy whose rewritten-upstream finding
 * has severity sev, before that finding is added: a later finding that
 * follows from it is no root cause, whether the caps list them or not.
 */
int pg_report_mark_copy(pg_report *r, const pg_oid *commit, enum pg_severity sev);

/* 1 + the severity of commit's rewritten-upstream finding, or 0: no copy. */
unsigned pg_report_copy_severity(const pg_report *r, const pg_oid *commit);

/* Add a note about commit (may be NULL); upstream may be NULL. */
int pg_report_add_note(pg_report *r, enum pg_check_id check, const pg_commit *commit,
		       const pg_oid *upstream, const char *fmt, ...) PG_PRINTF(5, 6);

/* Add a detail; pull and upstream may be NULL. */
int pg_finding_detail(pg_finding *f, const char *field, const char *pull,
		      const char *upstream);
int pg_finding_detailf(pg_finding *f, const char *field, const char *fmt, ...)
	PG_PRINTF(3, 4);

/*
 * Record the transparency log's evidence (every string copied; message_id
 * and date may be NULL), replacing any recorded before.
 */
int pg_report_set_tlog_evidence(pg_report *r, const char *message_id, const char *date,
			      const char *pushed_by, const char *repo, bool certified);

/* Append a copy of *info (every string and the e-mail list are copied). */
int pg_report_add_signature(pg_report *r, const pg_signature_info *info);

/* Add a stage (status PASSED until set); *out borrowed until the next add. */
int pg_report_add_stage(pg_stage **out, pg_report *r, const char *name);
int pg_stage_set(pg_stage *s, enum pg_stage_status status, const char *log,
		 const char *fmt, ...) PG_PRINTF(4, 5);

/*
 * Findings of severity sev, the omitted ones included: the verdict counts
 * them too.  pg_report_count_roots counts only root causes: an omitted
 * finding counts as one unless it follows from its commit's copy.
 */
size_t pg_report_count(const pg_report *r, enum pg_severity sev);
size_t pg_report_count_roots(const pg_report *r, enum pg_severity sev);
/* Findings that follow from another (implied_by or implied_unlisted), omitted ones included. */
size_t pg_report_count_implied(const pg_report *r);
/* Reject when any finding is an error, root cause or not. */
enum pg_verdict pg_report_verdict(const pg_report *r);

/*
 * The summary as one sentence: "the pull re-creates 4 upstream commits
 * under new ids (2 merges, 2 signed tags dropped): without them it should
 * carry 2 commits".  Nothing is appended when !r->has_summary.
 */
int pg_summary_format(pg_buf *out, const pg_report *r);

/*
 * The verdict in the summary's words, counting root causes: "reject: 35
 * errors, 0 warnings as root causes; 40 findings follow from them".
 */
int pg_summary_verdict(pg_buf *out, const pg_report *r);

/* Findings of one check that were kept, in the order they were added. */
size_t pg_report_count_check(const pg_report *r, enum pg_check_id check);

/* Findings of one check counted but not kept, of any severity. */
size_t pg_report_omitted(const pg_report *r, enum pg_check_id check);

/*
 * Text for a terminal: the summary first, the pull and upstream, a
 * "signed:" line per checked signature (or "not checked"), one line per
 * root finding (severity, check, short id, subject) with its details and
 * then the findings that follow from it indented below, the notes, and a
 * final verdict line counting root causes.  Every string from a repository
 * is stripped of control characters and escapes.
 */
int pg_report_format_text(pg_buf *out, const pg_report *r);

/*
 * The KUnit selection for a terminal (part of the text report): the note,
 * one line per option (status, source, the path that selected it), its
 * reason, and each of its suites with its base and merge results when the
 * boot ran.  Nothing when r has no selection.
 */
int pg_report_format_selection(pg_buf *out, const pg_report *r);

/* The JSON report described in docs/report-schema.md. */
int pg_report_format_json(pg_buf *out, const pg_report *r);

/* The most JSON a report may have: what pg_report_format_json can write (a pg_buf's default cap). */
#define PG_REPORT_JSON_MAX PG_BUF_DEFAULT_MAX

/*
 * The report that pg_report_format_json wrote, read back from text[0..len):
 * *out is the caller's to free (pg_report_free), and its JSON is the text
 * it was read from, byte for byte, when that text is the writer's.  Strings
 * are kept as they are (renderers sanitize them).  What the JSON does not
 * hold is made again: the findings kept per check from the findings, the
 * rewritten copies from the listed rewritten-upstream findings (as
 * verifier/story.c marks them; a copy whose finding the cap left unlisted is
 * not known, and no finding is added on a commit after verify).
 *
 * PG_ETOOBIG when len is over PG_REPORT_JSON_MAX (nothing is read);
 * PG_EINVALID, with a message naming the member ("report JSON:
 * findings[3].severity: 'fatal' is not a severity"), when the text is not
 * such a report: not JSON, a schema other than PG_REPORT_SCHEMA_VERSION, a
 * member missing or of the wrong type, an unknown check, severity or status,
 * an id that is not 40 (a commit) or 64 (policy_sha256) lower-case hex
 * digits, counts that do not add up (errors, warnings, the verdict and the
 * summary's against the findings and the omitted ones), a value the writer
 * does not write; PG_ENOMEM.  On an error *out is NULL.
 */
int pg_report_parse_json(pg_report **out, const char *text, size_t len);

/*
 * Add a stage's provenance (*out borrowed until the next add; strings set
 * with pg_provenance_set) and a file to it; sha256 may be NULL.  A file
 * that is not shipped marks the provenance and the report simulated.
 */
int pg_report_add_provenance(pg_provenance **out, pg_report *r, const char *stage);
int pg_provenance_add_file(pg_report *r, pg_provenance *p, const char *path,
			   const char *sha256, bool shipped);
/* Replace *field (a string member of p) with a copy of value (NULL clears it). */
int pg_provenance_set(char **field, const char *value);

/* Add a suite's row; base or merge NULL when it did not report there. */
int pg_report_add_suite(pg_report *r, const char *name, const pg_suite_counts *base,
			const pg_suite_counts *merge, const char *verdict);

/*
 * Add a selected option (strings copied; path, source, depends, reason and
 * suites may be NULL); *out borrowed until the next add.
 */
int pg_report_add_selected(pg_selected **out, pg_report *r, const char *option,
			   const char *path, const char *source, bool test,
			   enum pg_selected_status status);

/* Free what the gate's evidence holds (pg_report_free calls it). */
void pg_report_free_evidence(pg_report *r);

#define PG_REPORT_SCHEMA_VERSION 1

#endif
