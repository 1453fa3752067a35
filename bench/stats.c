/* Per-interval counters and the error table (see stats.h). */
#include "stats.h"

#include <stdio.h>
#include <string.h>

#include "cn/rc.h"

void bench_stats_init(struct bench_stats *st, size_t nops)
{
    memset(st, 0, sizeof(*st));
    st->nops = nops;
    for (size_t i = 0; i < nops; i++)
        st->op[i].lat = cn_hist_new(BENCH_STATS_MAX_LATENCY_US);
}

void bench_stats_fini(struct bench_stats *st)
{
    for (size_t i = 0; i < st->nops; i++)
        cn_hist_free(st->op[i].lat);
    memset(st, 0, sizeof(*st));
}

void bench_stats_reset(struct bench_stats *st)
{
    for (size_t i = 0; i < st->nops; i++) {
        struct cn_hist *h = st->op[i].lat;
        cn_hist_reset(h);
        memset(&st->op[i], 0, sizeof(st->op[i]));
        st->op[i].lat = h;
    }
}

void bench_stats_merge(struct bench_stats *dst, const struct bench_stats *src)
{
    CN_ASSERT(dst->nops == src->nops);
    for (size_t i = 0; i < src->nops; i++) {
        struct bench_op_stats *d = &dst->op[i];
        const struct bench_op_stats *s = &src->op[i];
        cn_hist_merge(d->lat, s->lat);
        d->ok += s->ok;
        d->errors += s->errors;
        d->not_found += s->not_found;
        d->bytes_in += s->bytes_in;
        d->bytes_out += s->bytes_out;
    }
}

#define BENCH_STATS_SUM(fn, field)                                  \
    uint64_t fn(const struct bench_stats *st)                       \
    {                                                               \
        uint64_t t = 0;                                             \
        for (size_t i = 0; i < st->nops; i++)                       \
            t += st->op[i].field;                                   \
        return t;                                                   \
    }

BENCH_STATS_SUM(bench_stats_total_ok, ok)
BENCH_STATS_SUM(bench_stats_total_errors, errors)
BENCH_STATS_SUM(bench_stats_total_bytes_in, bytes_in)
BENCH_STATS_SUM(bench_stats_total_bytes_out, bytes_out)

void bench_errors_add(struct bench_errors *errs, size_t op, enum bench_error_kind kind,
                      int code, uint64_t count, const char *sample)
{
    for (size_t i = 0; i < errs->n; i++) {
        struct bench_error_count *e = &errs->e[i];
        if (e->op == op && e->kind == kind && e->code == code) {
            e->count += count;
            return;
        }
    }
    if (errs->n == BENCH_ERRORS_MAX) {
        errs->other += count;
        return;
    }
    struct bench_error_count *e = &errs->e[errs->n++];
    *e = (struct bench_error_count){
        .op = (uint16_t)op, .kind = (uint16_t)kind, .code = code, .count = count};
    size_t n = 0;
    for (; sample != NULL && sample[n] != '\0' && n + 1 < sizeof(e->sample); n++)
        e->sample[n] = (sample[n] >= 32 && sample[n] < 127) ? sample[n] : ' ';
    e->sample[n] = '\0';
}

void bench_errors_merge(struct bench_errors *dst, const struct bench_errors *src)
{
    for (size_t i = 0; i < src->n; i++)
        bench_errors_add(dst, src->e[i].op, src->e[i].kind, src->e[i].code, src->e[i].count,
                         src->e[i].sample);
    dst->other += src->other;
}

/* Names of the transport errors one meets in a benchmark; others by number. */
static const char *bench_errors_curl_name(int code)
{
    switch (code) {
    case 6: return "couldnt_resolve_host";
    case 7: return "couldnt_connect";
    case 18: return "partial_file";
    case 23: return "write_error";
    case 26: return "read_error";
    case 28: return "operation_timedout";
    case 52: return "got_nothing";
    case 55: return "send_error";
    case 56: return "recv_error";
    default: return NULL;
    }
}

/* Erlang's order of two atoms: by their text. */
static int bench_errors_atom_cmp(const char *a, const char *b)
{
    int c = strcmp(a, b);
    return (c > 0) - (c < 0);
}

/* Erlang's order of two reasons: atoms (integrity_*) before tuples; tuples
 * by their tag (curl < http), then integers before atoms, integers by value. */
static int bench_errors_reason_cmp(const struct bench_error_count *a,
                                   const struct bench_error_count *b)
{
    int ta = a->kind != BENCH_ERR_INTEGRITY, tb = b->kind != BENCH_ERR_INTEGRITY;
    if (ta != tb)
        return ta - tb;
    if (!ta)
        return bench_errors_atom_cmp(a->code ? "integrity_missing" : "integrity_mismatch",
                                     b->code ? "integrity_missing" : "integrity_mismatch");
    if (a->kind != b->kind)
        return bench_errors_atom_cmp(a->kind == BENCH_ERR_CURL ? "curl" : "http",
                                     b->kind == BENCH_ERR_CURL ? "curl" : "http");
    const char *na = a->kind == BENCH_ERR_CURL ? bench_errors_curl_name(a->code) : NULL;
    const char *nb = b->kind == BENCH_ERR_CURL ? bench_errors_curl_name(b->code) : NULL;
    if ((na != NULL) != (nb != NULL))
        return na != NULL ? 1 : -1;
    if (na != NULL)
        return bench_errors_atom_cmp(na, nb);
    return (a->code > b->code) - (a->code < b->code);
}

int bench_errors_cmp(const struct bench_error_count *a, const struct bench_error_count *b,
                     const struct bench_settings *s)
{
    const char *oa = a->op < s->nops ? s->ops[a->op].label : "?";
    const char *ob = b->op < s->nops ? s->ops[b->op].label : "?";
    int c = bench_errors_atom_cmp(oa, ob);
    return c != 0 ? c : bench_errors_reason_cmp(a, b);
}

void bench_errors_name(const struct bench_error_count *e, const struct bench_settings *s,
                       char *out, size_t outlen)
{
    const char *op = e->op < s->nops ? s->ops[e->op].label : "?";
    const char *cname;
    switch ((enum bench_error_kind)e->kind) {
    case BENCH_ERR_HTTP:
        snprintf(out, outlen, "{%s,{http,%d}}", op, (int)e->code);
        break;
    case BENCH_ERR_CURL:
        cname = bench_errors_curl_name(e->code);
        if (cname != NULL)
            snprintf(out, outlen, "{%s,{curl,%s}}", op, cname);
        else
            snprintf(out, outlen, "{%s,{curl,%d}}", op, (int)e->code);
        break;
    case BENCH_ERR_INTEGRITY:
        snprintf(out, outlen, "{%s,%s}", op, e->code ? "integrity_missing" : "integrity_mismatch");
        break;
    default:
        snprintf(out, outlen, "{%s,unknown}", op);
        break;
    }
}
