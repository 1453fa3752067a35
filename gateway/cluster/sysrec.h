/* A follower of system records ("s/..." records the cluster keeps for the
 * gateways: access keys, auth/key_sync.h; the cluster map, map_sync.h):
 * the part they share. A round runs on one loop every interval, never two
 * at once: the timer is armed again only when the
 * round ends. Each store or node request of a round is counted, so that a
 * callback arriving after close does nothing and the follower is freed only
 * when nothing is left in flight. What a round reads and what it does with
 * the records is the caller's. */
#ifndef GW_SYSREC_H
#define GW_SYSREC_H

#include <stdint.h>

#include <event2/event.h>

struct gw_sysrec;

/* Starts a round; the round must end in gw_sysrec_round_end(). */
typedef void (*gw_sysrec_round_cb)(void *arg);

/* Starts following on base: round(arg) first_ms from now, then interval_ms
 * after each round's end. */
struct gw_sysrec *gw_sysrec_new(struct event_base *base, int64_t first_ms, int64_t interval_ms,
                                gw_sysrec_round_cb round, void *arg);
/* The round is over: the next one starts interval_ms from now. */
void gw_sysrec_round_end(struct gw_sysrec *w);
/* A request of the round went out (its callback will call op_done). */
void gw_sysrec_op_start(struct gw_sysrec *w);
/* Its callback runs: returns 1 when the follower was closed (the callback
 * must then return at once), else 0. */
int gw_sysrec_op_done(struct gw_sysrec *w);
int gw_sysrec_closed(const struct gw_sysrec *w);
/* Stops the timer; later callbacks only count down. */
void gw_sysrec_close(struct gw_sysrec *w);
/* Frees w after close when no request is in flight and returns 1; else
 * logs (naming what) and returns 0, and the caller must keep its own state
 * too (a callback still to come would find it freed). NULL: 1. */
int gw_sysrec_free(struct gw_sysrec *w, const char *what);

#endif
