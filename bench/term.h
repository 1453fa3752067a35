/* Erlang-term reader for basho_bench config files: a sequence of terms, each
 * ended by '.', with '%' comments. Understands integers (with Base#digits and
 * $c), floats, atoms (bare and 'quoted'), "strings", <<"binaries">>, tuples
 * and lists. This is a parser of outside input: every length and depth is
 * bounded and errors name the line and column. */
#ifndef BENCH_TERM_H
#define BENCH_TERM_H

#include <stddef.h>
#include <stdint.h>

#include "cn/rc.h"

enum bench_term_type {
    BENCH_TERM_INT,
    BENCH_TERM_FLOAT,
    BENCH_TERM_ATOM,
    BENCH_TERM_STRING,  /* "..." and <<"...">> */
    BENCH_TERM_TUPLE,
    BENCH_TERM_LIST,
};

struct bench_term {
    enum bench_term_type type;
    int line, col;               /* where the term starts, 1-based */
    int64_t i;                   /* INT */
    double f;                    /* FLOAT */
    const char *s;               /* ATOM, STRING: NUL-terminated copy */
    size_t len;                  /* ATOM, STRING: bytes; TUPLE, LIST: items */
    struct bench_term **items;   /* TUPLE, LIST */
};

/* A parsed file: its top-level terms and the memory they live in. */
struct bench_term_doc {
    struct bench_term **terms;
    size_t nterms;
    struct bench_term_arena *arena;
};

#define BENCH_TERM_MAX_DEPTH 32
#define BENCH_TERM_MAX_INPUT (16u << 20)

/* Parses buf[0..len) as a config file (terms each ended by '.'). On success
 * fills doc (free with bench_term_doc_fini). On error returns CN_INVAL with
 * "line L, column C: what" in err and leaves doc empty. */
int bench_term_parse_doc(const char *buf, size_t len, struct bench_term_doc *doc,
                         char err[CN_ERR_LEN]);

/* Parses exactly one term with no trailing '.', as given on a command line
 * ("{rate,5}", "[{get,1}]", "8"). Same ownership and errors as above; the
 * term is doc->terms[0]. */
int bench_term_parse_one(const char *buf, size_t len, struct bench_term_doc *doc,
                         char err[CN_ERR_LEN]);

void bench_term_doc_fini(struct bench_term_doc *doc);

/* Helpers for readers of the tree. */
int bench_term_is_atom(const struct bench_term *t, const char *name);
int bench_term_is_tuple(const struct bench_term *t, size_t arity);
/* A number as a double (INT or FLOAT); CN_INVAL otherwise. */
int bench_term_number(const struct bench_term *t, double *out);
/* A string, atom or list of small integers written into out (NUL-ended);
 * CN_INVAL for other types, CN_TOOBIG when it does not fit. */
int bench_term_text(const struct bench_term *t, char *out, size_t outlen);

/* Writes t in Erlang syntax (for --dump-config and error messages); returns
 * the length it would have had, like snprintf. */
size_t bench_term_format(const struct bench_term *t, char *out, size_t outlen);

#endif
