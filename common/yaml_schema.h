/* yaml_schema.h - a YAML document read into a struct by const field tables, every problem by place. */
#ifndef PG_YAML_SCHEMA_H
#define PG_YAML_SCHEMA_H

#include "common/buf.h"
#include "common/yaml_tree.h"

/*
 * One reader for every YAML input pullgate takes (the policy, the serve
 * configuration, push records), so that all of them are equally strict:
 * unknown keys (with a "did you mean"), repeated keys, wrong types, empty
 * or over-long strings, numbers out of range and missing required keys are
 * each a problem "'PATH' wants WHAT, not FOUND" at the value's place.
 *
 * A document is described by tables of fields.  Each field names its key,
 * its kind and where the value goes: offset bytes into the struct the
 * table reads into (its "base"), or a callback for what a kind cannot say.
 *
 *	static const pg_yaml_field listen_fields[] = {
 *		{ .key = "address", .kind = PG_FIELD_STRING, .offset = offsetof(cfg, address) },
 *		{ .key = "port", .kind = PG_FIELD_UINT, .offset = offsetof(cfg, port),
 *		  .max = 65535 },
 *	};
 */

/* Longest string a field accepts unless it says otherwise. */
#define PG_YAML_STRING_MAX 4096
/* Most fields in one table. */
#define PG_YAML_MAX_FIELDS 32

/* One thing wrong with a document. */
typedef struct pg_yaml_problem {
	unsigned line;   /* 1-based; 0 when it concerns the whole text (its size) */
	unsigned column; /* 1-based, in characters */
	char *message;   /* what was expected; one line, printable, no place */
} pg_yaml_problem;

/*
 * Problems in document order, at most max of them.  max == 1 is the
 * first-problem mode of a loader: reading stops at the first.  A larger
 * max collects that many and then one last entry saying the rest are not
 * shown.  full is set once nothing more will be kept; reading stops there.
 */
typedef struct pg_yaml_problems {
	pg_yaml_problem *items;
	size_t n;
	size_t alloc;
	size_t max;
	bool full;
} pg_yaml_problems;

#define PG_YAML_PROBLEMS_INIT(most) { NULL, 0, 0, (most), false }

/* Append a problem (msg is copied); 0, or PG_ENOMEM. */
int pg_yaml_problems_add(pg_yaml_problems *pr, pg_yaml_mark at, const char *msg);

/* Free the problems; pr is left empty, with its max. */
void pg_yaml_problems_release(pg_yaml_problems *pr);

/*
 * Append one problem as "NAME:LINE:COLUMN: message" ("NAME: message" for
 * line 0), or as "line L, column C: message" when name is NULL (a request
 * body has no file name).
 */
int pg_yaml_problem_format(pg_buf *out, const char *name, const pg_yaml_problem *p);

/* Set the first problem, formatted as above, as the thread's error; returns PG_EINVALID. */
int pg_yaml_problems_error(const pg_yaml_problems *pr, const char *name);

typedef enum pg_yaml_kind {
	PG_FIELD_STRING,  /* char *: a non-empty scalar without control characters */
	PG_FIELD_PATH,    /* char *: a string; a relative one is joined to the reader's basedir */
	PG_FIELD_BOOL,    /* bool: unquoted true or false */
	PG_FIELD_UINT,    /* unsigned: an unquoted decimal, no sign, no leading zero */
	PG_FIELD_SIZE,    /* size_t: the same */
	PG_FIELD_STRINGS, /* char ** and a size_t count: a list of strings, each as STRING */
	PG_FIELD_MAP,     /* a mapping read by .sub into base + offset */
	PG_FIELD_MAPS,    /* a list of mappings read by .sub into an array of .size-byte items */
	PG_FIELD_NAMES,   /* a mapping of free names, each entry given to .entry */
	PG_FIELD_CUSTOM,  /* .read reads the value */
} pg_yaml_kind;

typedef struct pg_yaml_reader pg_yaml_reader;
typedef struct pg_yaml_field pg_yaml_field;
typedef struct pg_yaml_table pg_yaml_table;

/* Reads v, the value at path, into base (CUSTOM). */
typedef void (*pg_yaml_read_fn)(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
				const char *path, const pg_yaml_field *f);

/*
 * Reads one entry of a NAMES mapping at map_path: key (a name, not
 * repeated) and its value, whose path is path.
 */
typedef void (*pg_yaml_entry_fn)(pg_yaml_reader *r, void *base, const pg_yaml_node *key,
				 const pg_yaml_node *v, const char *map_path, const char *path);

/* Rules across the fields of one mapping, run after they were read (an either/or). */
typedef void (*pg_yaml_check_fn)(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
				 const char *path);

struct pg_yaml_field {
	const char *key;
	pg_yaml_kind kind;
	size_t offset;           /* of the member, in the struct the table reads into */
	size_t count;            /* STRINGS, MAPS, NAMES with .size: the size_t member counting items */
	/*
	 * UINT, SIZE: the range (a max of 0 is no limit).  STRING, PATH,
	 * STRINGS: the fewest characters and the most bytes (0: the default
	 * PG_YAML_STRING_MAX).  MAPS, NAMES: the most items (0: no limit).
	 */
	unsigned long long min, max;
	const char *wants;       /* what a value (for lists, one item) is: "an e-mail address" */
	const char *list_wants;  /* STRINGS, MAPS, NAMES: what the whole is: "a list of globs" */
	/* STRING, PATH, STRINGS: NULL when s will do, else what was expected */
	const char *(*why)(const char *s);
	const pg_yaml_table *sub; /* MAP, MAPS */
	size_t size;             /* MAPS, and NAMES that fill an array: the size of one item */
	pg_yaml_read_fn read;    /* CUSTOM */
	pg_yaml_entry_fn entry;  /* NAMES */
	bool required;           /* a mapping without this key is a problem */
	bool secret;             /* never quoted back; zeroed before it is freed */
};

struct pg_yaml_table {
	const pg_yaml_field *fields;
	size_t n;                /* at most PG_YAML_MAX_FIELDS */
	pg_yaml_check_fn check;  /* may be NULL */
};

#define PG_YAML_TABLE(fields, check) { (fields), PG_ARRAY_SIZE(fields), (check) }
/* A table in place, for .sub and .root (a file-scope compound literal is static). */
#define PG_YAML_SUB(fields, check) (&(const pg_yaml_table)PG_YAML_TABLE(fields, check))
/* The row of a mapping read by its own fields into the same struct. */
#define PG_YAML_SECTION(fields, check) .kind = PG_FIELD_MAP, .sub = PG_YAML_SUB(fields, check)

/* What a whole document is. */
typedef struct pg_yaml_doc {
	const char *what;          /* names it in messages: "the policy" */
	const char *wants;         /* what its top level is: "a mapping of settings" */
	const pg_yaml_table *root;
	bool may_be_empty;         /* an empty text (or only comments) keeps every default */
} pg_yaml_doc;

/* The state of one reading; callbacks may use ctx and report through the functions below. */
struct pg_yaml_reader {
	pg_yaml_problems *pr;
	const char *basedir;       /* relative PATH values are joined to it; NULL keeps them */
	void *ctx;                 /* the caller's, for its callbacks */
	const char *what;          /* the document's name: "the policy" */
	int err;                   /* the first failure of pullgate itself: reading stops */
};

/*
 * Parse text[0..len) with pg_yaml_parse and read it into base, which holds
 * the defaults on entry (lists are appended to).  Every problem, from a
 * syntax error to a wrong value, goes to *pr.  Returns 0 whether or not
 * there were problems; negative only when pullgate itself fails (PG_ENOMEM)
 * or a callback refused with its own code (a push record with too many
 * changes: PG_ETOOBIG), with the thread's error set.  With problems, base
 * may be half filled: free it, do not use it.
 */
int pg_yaml_read(pg_yaml_problems *pr, void *base, const pg_yaml_doc *doc, const char *text,
		 size_t len, const char *basedir, void *ctx);

/*
 * pg_yaml_read in first-problem mode, for a loader: 0 when text was read
 * without a problem; else PG_EINVALID with the first problem as the
 * thread's error (as pg_yaml_problem_format writes it with name), or what
 * pg_yaml_read failed with.
 */
int pg_yaml_load(void *base, const pg_yaml_doc *doc, const char *text, size_t len,
		 const char *name, const char *basedir, void *ctx);

/* --- for callbacks ---------------------------------------------------------- */

/* True once reading should stop: a failure, or no room for another problem. */
bool pg_yaml_stopped(const pg_yaml_reader *r);

/* Record a failure of pullgate itself (the first one is kept). */
void pg_yaml_fail(pg_yaml_reader *r, int err);

/* A problem at the place of node. */
void pg_yaml_problem_at(pg_yaml_reader *r, const pg_yaml_node *at, const char *fmt, ...)
	PG_PRINTF(3, 4);

/* "'path' wants WANTS, not FOUND", where FOUND describes v (quoted, cut, one line). */
void pg_yaml_wrong(pg_yaml_reader *r, const pg_yaml_node *v, const char *path,
		   const char *wants);

/* An unknown key (what: "key", "check"): a near name of names[0..n) suggested, else all listed. */
void pg_yaml_unknown(pg_yaml_reader *r, const pg_yaml_node *key, const char *what,
		     const char *path, const char *const *names, size_t n);

/* The string at v as field f wants it (f's kind is ignored), or NULL after a problem. Borrowed. */
const char *pg_yaml_string(pg_yaml_reader *r, const pg_yaml_node *v, const char *path,
			   const pg_yaml_field *f);

/* Read v as field f wants it, into base: what pg_yaml_read does with each value. */
void pg_yaml_read_value(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			const pg_yaml_field *f);

/* A problem when map has both keys: "'path' wants either 'a' or 'b', not both". */
void pg_yaml_either(pg_yaml_reader *r, const pg_yaml_node *map, const char *path,
		    const char *a, const char *b);

/* s joined to the reader's basedir when relative, or NULL after recording PG_ENOMEM. */
char *pg_yaml_path(pg_yaml_reader *r, const char *s);

/* Append s for a message: one printable line, cut at 60 characters, in quotes. */
int pg_yaml_quote(pg_buf *out, const char *s);

#endif
