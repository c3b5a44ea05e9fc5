/* test_hygiene.c - unit tests for the sign-off and Fixes: readers behind the hygiene checks. */
#include "tests/unit/unit.h"

#include "verifier/pull.h"

static void test_fixes_parse(void **state)
{
	pg_fixes fx;

	(void)state;
	assert_int_equal(pg_fixes_parse(&fx, "557f8c582a9b (\"ubsan: Reintroduce signed overflow sanitizer\")"), 0);
	assert_int_equal(fx.idlen, 12);
	assert_memory_equal(fx.id, "557f8c582a9b", 12);
	assert_int_equal(fx.sublen, strlen("ubsan: Reintroduce signed overflow sanitizer"));
	assert_memory_equal(fx.subject, "ubsan: Reintroduce", 18);
	assert_false(fx.cut);
	/* a subject that itself holds quotes and parentheses */
	assert_int_equal(pg_fixes_parse(&fx, "abcdef1 (\"x: quote \"y\" (z)\")"), 0);
	assert_int_equal(fx.sublen, strlen("x: quote \"y\" (z)"));
	assert_int_equal(pg_fixes_parse(&fx, "557f8c582a9b (\"\")"), 0);
	assert_int_equal(fx.sublen, 0);

	/* no commit id: nothing to resolve */
	assert_int_equal(pg_fixes_parse(&fx, "the helper from last week"), -1);
	assert_int_equal(pg_fixes_parse(&fx, "abc (\"too short\")"), -1);
	assert_int_equal(pg_fixes_parse(&fx, "https://example.org/issues/20"), -1);
	assert_int_equal(pg_fixes_parse(&fx, "CID 348360"), -1);
	assert_int_equal(pg_fixes_parse(&fx, "557f8c582a9bx (\"glued\")"), -1);

	/* the forms real trailers take */
	assert_int_equal(pg_fixes_parse(&fx, "557f8c582a9b"), 0);
	assert_int_equal(fx.sublen, 0);
	assert_int_equal(pg_fixes_parse(&fx, "commit 05ef48a2484b (\"efi_driver: EFI block driver\")"), 0);
	assert_memory_equal(fx.id, "05ef48a2484b", 12);
	assert_int_equal(fx.sublen, strlen("efi_driver: EFI block driver"));
	assert_int_equal(pg_fixes_parse(&fx, "e663b2ff4ba2(\"tpm: Add 'tpm autostart'\")"), 0);
	assert_int_equal(fx.sublen, strlen("tpm: Add 'tpm autostart'"));
	assert_int_equal(pg_fixes_parse(&fx, "1919f58a8f (crypto/fsl: fix dcache)"), 0);
	assert_memory_equal(fx.subject, "crypto/fsl: fix dcache", fx.sublen);
	assert_int_equal(pg_fixes_parse(&fx, "3e9fddfc4f14 \"doc: Move devicetree control doc to rST\""), 0);
	assert_memory_equal(fx.subject, "doc: Move devicetree control doc to rST", fx.sublen);
	assert_int_equal(pg_fixes_parse(&fx, "be16fc81b2ed (\"trace: Update proftool\")."), 0);
	assert_memory_equal(fx.subject, "trace: Update proftool", fx.sublen);
	assert_int_equal(pg_fixes_parse(&fx, "db61e70e0d2a efi_loader: skip VenMedia"), 0);
	assert_memory_equal(fx.subject, "efi_loader: skip VenMedia", fx.sublen);
	/* a line cut short */
	assert_int_equal(pg_fixes_parse(&fx, "5fe9e0deabb1 (\"stm32mp: allow calling f()"), 0);
	assert_true(fx.cut);
	assert_memory_equal(fx.subject, "stm32mp: allow calling f()", fx.sublen);
}

static pg_ident who(const char *name, const char *email)
{
	pg_ident id = { (char *)name, (char *)email, 0, 0 };

	return id;
}

static void test_signed_off_by(void **state)
{
	static const char text[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
		"author Frank <frank@example.org> 1 +0000\n"
		"committer Sam <sam@example.org> 1 +0000\n\n"
		"subject\n\nSigned-off-by: Frank <FRANK@example.org>\n"
		"Acked-by: Sam <sam@example.org>\n";
	pg_commit *c = NULL;
	pg_ident frank = who("Frank", "frank@example.org"), sam = who("Sam", "sam@example.org");
	pg_ident rank = who("Rank", "rank@example.org"), nobody = who("", "");

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, text, strlen(text)), 0);
	assert_true(pg_commit_signed_off_by(c, &frank));
	/* an Acked-by is not a sign-off */
	assert_false(pg_commit_signed_off_by(c, &sam));
	assert_false(pg_commit_signed_off_by(c, &rank));
	assert_false(pg_commit_signed_off_by(c, &nobody));
	pg_commit_free(c);
}

/*
 * Real messages put a maintainer's note or a Reviewed-by paragraph after the
 * author's sign-off; checkpatch reads every line, and so does the check.
 * The same name under another address is the same person.
 */
static void test_signed_off_anywhere(void **state)
{
	static const char text[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
		"author Heinrich S <heinrich@canonical.example> 1 +0000\n"
		"committer Simon G <sjg@example.org> 1 +0000\n\n"
		"acpi: fix the table size\n\nWhy.\n\n"
		"  Signed-off-by: Heinrich S <heinrich@canonical.example>  \n"
		"Reviewed-by: Simon G <sjg@example.org>\n\n"
		"Update the test to expect the header size.\n"
		"Signed-off-by: Simon G <sjg@other.example>\n\n"
		"Reviewed-by: Someone <someone@example.org>\n";
	pg_commit *c = NULL;
	pg_ident heinrich = who("Heinrich S", "heinrich@canonical.example");
	pg_ident simon = who("Simon G", "sjg@example.org"), simone = who("Simon", "x@example.org");
	pg_ident someone = who("Someone", "someone@example.org");

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, text, strlen(text)), 0);
	/* the last paragraph is only a Reviewed-by */
	assert_int_equal(c->ntrailers, 1);
	assert_true(pg_commit_signed_off_by(c, &heinrich));
	assert_true(pg_commit_signed_off_by(c, &simon));
	/* a prefix of a name is not the name; a Reviewed-by is no sign-off */
	assert_false(pg_commit_signed_off_by(c, &simone));
	assert_false(pg_commit_signed_off_by(c, &someone));
	pg_commit_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixes_parse),
		cmocka_unit_test(test_signed_off_by),
		cmocka_unit_test(test_signed_off_anywhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
