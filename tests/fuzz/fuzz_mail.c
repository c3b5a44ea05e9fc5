/* fuzz_mail.c - libFuzzer target: request-pull mails, mboxes, MIME and header decoding. */
#include "tests/fuzz/fuzz.h"
#include "server/hooks.h"
#include "verifier/mail.h"

/* What the hook and the pull-request checks read of a parsed mail. */
static void use_request(const pg_pull_request *pr)
{
	pg_buf b = PG_BUF_INIT;
	size_t i;

	pg_hook_mail_tag(&b, pr->ref);
	for (i = 0; i < pr->nshortlog; i++)
		pg_buf_printf(&b, "%s %s", pr->shortlog[i].author, pr->shortlog[i].subject);
	for (i = 0; i < pr->nfiles; i++)
		pg_buf_printf(&b, "%s %s", pr->files[i].path,
			      pr->files[i].old_path ? pr->files[i].old_path : "");
	pg_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	pg_pull_request *pr = NULL;
	pg_buf b = PG_BUF_INIT;

	/* the whole mail or mbox, as the hook and --pull-request read it */
	if (pg_mail_parse(&pr, s, size) == 0)
		use_request(pr);
	pg_pull_request_free(pr);
	pr = NULL;
	/* the request-pull text alone */
	if (pg_mail_parse_body(&pr, s, size) == 0)
		use_request(pr);
	pg_pull_request_free(pr);
	/* the decoders on their own, for what the MIME structure would not reach */
	pg_mail_decode_header(&b, s, size);
	pg_buf_clear(&b);
	pg_mail_decode_qp(&b, s, size);
	pg_buf_clear(&b);
	pg_mail_decode_base64(&b, s, size);
	pg_buf_release(&b);
	return 0;
}
