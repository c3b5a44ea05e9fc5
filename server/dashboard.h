/* dashboard.h - what the dashboard's pages share: the HTML writer, the page frame, the report's sections. */
#ifndef PG_SERVER_DASHBOARD_H
#define PG_SERVER_DASHBOARD_H

#include "common/json.h"
#include "server/web.h"

/*
 * Private to server/dashboard*.c.  Every string that comes from the store,
 * a report or a log is data: it goes into a page through pg_dash_esc or
 * pg_dash_html, never as it is.
 */

/* Append s escaped for HTML (after making it valid UTF-8); NULL appends nothing. */
void pg_dash_esc(pg_buf *out, const char *s);

/*
 * Append fmt with each %s replaced by its argument escaped for HTML (NULL:
 * nothing); %% is a %, and no other conversion is known.  The attribute
 * lets the compiler check that every argument is a string.
 */
void pg_dash_html(pg_buf *out, const char *fmt, ...) PG_PRINTF(2, 3);

/* A commit id as its first 12 digits, the whole id in its title; nothing for NULL. */
void pg_dash_short_id(pg_buf *out, const char *hex);
/* The same of an object id; nothing when has is false. */
void pg_dash_short_oid(pg_buf *out, bool has, const pg_oid *id);
/* "refs/tags/NAME" as NAME (borrowed from tag). */
const char *pg_dash_tag_name(const char *tag);
/* Unix seconds as "YYYY-MM-DD HH:MM:SS UTC". */
void pg_dash_when(pg_buf *out, int64_t t);

/* The page head, the header bar with the maintainer's session, and <main>. */
void pg_dash_page_start(pg_buf *out, pg_req *rq, const char *title, const char *body_attrs);
/* </main>, the footer, and rs made a 200 HTML page: returns 0. */
int pg_dash_page_end(pg_buf *out, pg_resp *rs);

void pg_dash_state_badge(pg_buf *out, enum pg_job_state state);
/* The badge of a stand-in's run; id is its element id, or NULL for none. */
void pg_dash_simulated_badge(pg_buf *out, const char *id);

/*
 * Whether this service's build and boot are stand-ins: a script of either
 * stage under its data directory (or a file one reads) is not the one this
 * pullgate shipped, the test the gate makes of each stage's provenance
 * (pipeline/provenance.c), made before any report says so.
 */
bool pg_dash_stand_ins(const pg_server *srv);

/*
 * Whether j is, or was, a stand-in's run: its report says so, or it is
 * building or booting on a service whose scripts are stand-ins (the
 * report comes at the end of the run).  *stand_ins caches
 * pg_dash_stand_ins for a page of many pulls: -1 until it is known.
 */
bool pg_dash_simulated(const pg_server *srv, const pg_job *j, int *stand_ins);

/* The sections of a pull's page drawn from its report alone (dashboard_report.c). */
void pg_dash_summary(pg_buf *out, const pg_json *report);
void pg_dash_findings(pg_buf *out, const pg_json *report);
void pg_dash_comparison(pg_buf *out, const pg_json *report);
void pg_dash_selection(pg_buf *out, const pg_json *report);
void pg_dash_provenance(pg_buf *out, const pg_json *report);
void pg_dash_signatures(pg_buf *out, const pg_json *report);

/*
 * The merge window (dashboard_window.c), read from pg_store_queue's list
 * q.  The place of pull id in q (0: first), q->n when it is not in it.
 */
size_t pg_dash_window_find(const pg_job_list *q, int64_t id);
/*
 * The front page's section: the queue, first place first, and when each
 * pull is tested (pg_stack_eta: a kernel run takes run_s, 0 when not
 * known, worktrees at a time).
 */
void pg_dash_window(pg_buf *out, const pg_job_list *q, double run_s, unsigned worktrees);
/* A queued pull's page: its place, whether it is held, what it was tested on. */
void pg_dash_window_place(pg_buf *out, const pg_job_list *q, size_t i);
/*
 * The maintainer's buttons for q->items[i]: approve through (with the
 * pulls it approves, from the server's worker), hold or release, up, down.
 */
void pg_dash_window_actions(pg_buf *out, pg_req *rq, const pg_job_list *q, size_t i);
/*
 * The textual conflicts found as pulls entered the window: the pull's
 * own (and whom it waits behind), and those of the pulls of q that
 * conflict with it.
 */
void pg_dash_conflicts(pg_buf *out, const pg_job *j, const pg_job_list *q);
/* Why the pull's kernel stages failed (its attribution), with a link to the pull it failed with. */
void pg_dash_why(pg_buf *out, const pg_job *j);

#endif
