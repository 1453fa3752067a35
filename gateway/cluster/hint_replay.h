/* The replay side of hinted handoff (docs/cluster.md): one driver per
 * gateway, on one worker thread's store. Every handoff.replay_interval it
 * asks each node that is up which peers it holds hints for (HINT_TAKE
 * without a node: the counts), and for each peer that is up drains that
 * holder's hints for it: lists a batch (HINT_TAKE with the peer), repairs
 * each key (repair.h: the newest version goes to every stale replica), and
 * drops the hints whose repair reached the peer with the next HINT_TAKE
 * (only then). A gateway that dies mid-way leaves the hints on the holder
 * for the next replay; two gateways replaying one hint are harmless (nodes
 * keep only the newest version). One holder is drained at a time per
 * holder, at most `batch` repairs in flight each. Nodes a cluster map adds
 * are taken in at the next tick after this thread's client reaches them
 * (holders are room for the gateway's 256 slots: about 22 KiB; each known
 * holder's counts 2 KiB). */
#ifndef GW_HINT_REPLAY_H
#define GW_HINT_REPLAY_H

#include <stdint.h>

struct gw_store;
struct gw_handoff;
struct gw_hint_replay;

/* Starts the driver on s's event loop (s's client sends). */
struct gw_hint_replay *gw_hint_replay_new(struct gw_store *s, struct gw_handoff *h,
                                          int64_t interval_ms, uint32_t batch);

/* Stops it: no new work; requests and repairs in flight finish, then it
 * frees itself (each holds the store meanwhile, gw_store_hold). */
void gw_hint_replay_stop(struct gw_hint_replay *r);

#endif
