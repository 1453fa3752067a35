/* The Erlang-term reader of cairn-bench: every syntax basho_bench configs
 * use, and malformed input with the line and column of the error. */
#include "term.h"

#include <string.h>

#include "cn/test.h"

CN_TEST_GLOBALS;

static int parse(const char *text, struct bench_term_doc *doc, char err[CN_ERR_LEN])
{
    return bench_term_parse_doc(text, strlen(text), doc, err);
}

static void test_term_basho_config(void)
{
    const char *cfg =
        "%% a basho_bench config\n"
        "{mode, max}.\n"
        "{duration, 10}.   % minutes\n"
        "{concurrent, 16}.\n"
        "{driver, basho_bench_driver_http_raw}.\n"
        "{operations, [{get, 95}, {put, 5}]}.\n"
        "{key_generator, {uniform_int, 10000}}.\n"
        "{value_generator, {fixed_bin, 16#1000}}.\n"
        "{http_raw_ips, [\"127.0.0.1\", \"10.0.0.2\"]}.\n"
        "{http_raw_path, \"/bucket\"}.\n"
        "{rate, 2.5e1}.\n"
        "{bin, <<\"bytes\">>}.\n"
        "{quoted, 'Quoted Atom'}.\n"
        "{neg, -42}. {chr, $a}. {sep, 1_000_000}.\n"
        "{empty, [], {}, \"\"}.\n";
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(parse(cfg, &doc, err), CN_OK);
    CN_CHECK_EQ_INT(doc.nterms, 16);
    const struct bench_term *t = doc.terms[0];
    CN_CHECK(bench_term_is_tuple(t, 2));
    CN_CHECK(bench_term_is_atom(t->items[0], "mode"));
    CN_CHECK(bench_term_is_atom(t->items[1], "max"));
    CN_CHECK_EQ_INT(t->line, 2);
    CN_CHECK_EQ_INT(doc.terms[1]->items[1]->i, 10);
    const struct bench_term *ops = doc.terms[4]->items[1];
    CN_CHECK(ops->type == BENCH_TERM_LIST && ops->len == 2);
    CN_CHECK(bench_term_is_atom(ops->items[1]->items[0], "put"));
    CN_CHECK_EQ_INT(ops->items[1]->items[1]->i, 5);
    CN_CHECK_EQ_INT(doc.terms[6]->items[1]->items[1]->i, 4096);
    const struct bench_term *ips = doc.terms[7]->items[1];
    CN_CHECK_EQ_STR(ips->items[1]->s, "10.0.0.2");
    CN_CHECK(doc.terms[9]->items[1]->type == BENCH_TERM_FLOAT &&
             doc.terms[9]->items[1]->f == 25.0);
    CN_CHECK_EQ_STR(doc.terms[10]->items[1]->s, "bytes");
    CN_CHECK(bench_term_is_atom(doc.terms[11]->items[1], "Quoted Atom"));
    CN_CHECK_EQ_INT(doc.terms[12]->items[1]->i, -42);
    CN_CHECK_EQ_INT(doc.terms[13]->items[1]->i, 'a');
    CN_CHECK_EQ_INT(doc.terms[14]->items[1]->i, 1000000);
    const struct bench_term *e = doc.terms[15];
    CN_CHECK(e->len == 4 && e->items[1]->len == 0 && e->items[2]->len == 0 &&
             e->items[3]->type == BENCH_TERM_STRING && e->items[3]->len == 0);
    char text[64];
    CN_CHECK_EQ_INT(bench_term_text(e->items[1], text, sizeof(text)), CN_OK); /* [] == "" */
    CN_CHECK_EQ_STR(text, "");
    bench_term_doc_fini(&doc);
}

static void test_term_strings(void)
{
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(parse("{s, \"a\\tb\\\"c\\x41\\101\" \"-cat\"}.", &doc, err), CN_OK);
    CN_CHECK_EQ_STR(doc.terms[0]->items[1]->s, "a\tb\"cAA-cat");
    bench_term_doc_fini(&doc);
    /* a list of byte values reads as text too */
    CN_CHECK_EQ_INT(parse("{s, [104,105]}.", &doc, err), CN_OK);
    char text[8];
    CN_CHECK_EQ_INT(bench_term_text(doc.terms[0]->items[1], text, sizeof(text)), CN_OK);
    CN_CHECK_EQ_STR(text, "hi");
    CN_CHECK_EQ_INT(bench_term_text(doc.terms[0]->items[1], text, 2), CN_TOOBIG);
    bench_term_doc_fini(&doc);
}

static void test_term_format_roundtrip(void)
{
    const char *in = "{a,[{get,95},{'Put x',5}],\"s\\\"q\",-3,2.5,[]}";
    struct bench_term_doc doc;
    char err[CN_ERR_LEN], out[256];
    CN_CHECK_EQ_INT(bench_term_parse_one(in, strlen(in), &doc, err), CN_OK);
    size_t n = bench_term_format(doc.terms[0], out, sizeof(out));
    CN_CHECK_EQ_STR(out, in);
    CN_CHECK_EQ_INT(n, strlen(in));
    /* truncation stays NUL-terminated and reports the full length */
    char small[8];
    CN_CHECK_EQ_INT(bench_term_format(doc.terms[0], small, sizeof(small)), strlen(in));
    CN_CHECK_EQ_INT(strlen(small), 7);
    bench_term_doc_fini(&doc);
}

static void test_term_parse_one(void)
{
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    CN_CHECK_EQ_INT(bench_term_parse_one("{rate, 5}", 9, &doc, err), CN_OK);
    CN_CHECK(bench_term_is_tuple(doc.terms[0], 2));
    bench_term_doc_fini(&doc);
    CN_CHECK_EQ_INT(bench_term_parse_one("8.", 2, &doc, err), CN_OK);
    CN_CHECK_EQ_INT(doc.terms[0]->i, 8);
    bench_term_doc_fini(&doc);
    CN_CHECK_EQ_INT(bench_term_parse_one("100M", 4, &doc, err), CN_INVAL);
    CN_CHECK_EQ_INT(bench_term_parse_one("/bucket", 7, &doc, err), CN_INVAL);
    CN_CHECK_EQ_INT(bench_term_parse_one("", 0, &doc, err), CN_INVAL);
}

/* Each malformed input must fail with this "line L, column C: " prefix. */
static void check_error(const char *text, const char *where)
{
    struct bench_term_doc doc;
    char err[CN_ERR_LEN];
    int rc = parse(text, &doc, err);
    CN_CHECK_EQ_INT(rc, CN_INVAL);
    if (strncmp(err, where, strlen(where)) != 0) {
        fprintf(stderr, "  input %s: error '%s' does not start with '%s'\n", text, err, where);
        cn_test_failed_checks++;
    }
    CN_CHECK(doc.nterms == 0 && doc.terms == NULL);
}

static void test_term_malformed(void)
{
    check_error("{mode, max}", "line 1, column 12: expected '.'");
    check_error("{mode, max}.\n{duration 5}.", "line 2, column 11: expected ','");
    check_error("{mode, max}.\n\n  {a, \"open}.\n", "line 3, column 7: unterminated string");
    check_error("{a, [1,2}.", "line 1, column 9: expected ',' or ']'");
    check_error("{a, Var}.", "line 1, column 5: variables are not allowed");
    check_error("{a, 1}.{b, 2}.", "line 1, column 8: expected white space");
    check_error("{a, #}.", "line 1, column 5: unexpected '#'");
    check_error("{a, 99999999999999999999}.", "line 1, column 5: bad or too large integer");
    check_error("{a, 37#1}.", "line 1, column 7: bad integer base");
    check_error("{a, [1|2]}.", "line 1, column 7: improper lists");
    check_error("{a, <<1,2>>}.", "line 1, column 7: expected '>>'");
    check_error("{a, 'unterminated}.", "line 1, column 5: unterminated quoted atom");
    check_error("{a, \"\\x\"}.", "line 1, column 9: bad \\x escape");
    check_error("{a,\n b", "line 2, column 3: expected ','");
    check_error("{a, \x01}.", "line 1, column 5: unexpected byte 0x01");
    /* nesting is bounded */
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = '\0';
    strcat(deep, ".");
    check_error(deep, "line 1, column 33: terms nested deeper than 32");
}

static const struct cn_test_case cases[] = {
    {"basho_config", test_term_basho_config},
    {"strings", test_term_strings},
    {"format_roundtrip", test_term_format_roundtrip},
    {"parse_one", test_term_parse_one},
    {"malformed", test_term_malformed},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return cn_test_main(cases, argc, argv);
}
