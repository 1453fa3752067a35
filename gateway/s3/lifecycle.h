/* Bucket lifecycle rules (S3's lifecycle configuration): the parsed form,
 * its parser (over xml.c's walk) with the checks S3 makes, the canonical
 * XML that GET answers and that is stored under "lifecycle" in the bucket
 * record (bucket_meta.h), which rules apply to an object, and when an
 * object or upload falls due. Pure code: no request, no storage, so unit
 * tests and the fuzz target drive it whole; lifecycle_run.c applies it. */
#ifndef GW_LIFECYCLE_H
#define GW_LIFECYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "s3_error.h"
#include "tagset.h"
#include "xml.h"

#define GW_LC_MAX_RULES 1000          /* S3's limit */
#define GW_LC_ID_MAX 255
#define GW_LC_MAX_BYTES (512u * 1024) /* a request body; the stored form must also fit
                                         the bucket record (GW_BUCKET_META_MAX_LEN) */
#define GW_LC_NONE (-1)

struct gw_lc_tag {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
};

/* One rule. Strings are heap copies owned by the gw_lc. */
struct gw_lc_rule {
    char *id;
    size_t id_len;
    int enabled;                 /* Status Enabled (else Disabled) */
    int legacy_prefix;           /* the rule's own <Prefix> (PutBucketLifecycle's form) */
    int filter_and;              /* the filter's conditions were under <And> */
    char *prefix;                /* NULL: no prefix condition */
    size_t prefix_len;
    struct gw_lc_tag *tags;      /* every one must be on the object */
    uint32_t n_tags;
    int64_t size_gt, size_lt;    /* ObjectSizeGreaterThan / LessThan; GW_LC_NONE */
    int64_t exp_days;            /* Expiration Days; GW_LC_NONE */
    int64_t exp_date_s;          /* Expiration Date, Unix seconds (midnight UTC); GW_LC_NONE */
    int exp_marker;              /* ExpiredObjectDeleteMarker: GW_LC_NONE, 0 or 1 */
    int64_t nc_days;             /* NoncurrentVersionExpiration NoncurrentDays; GW_LC_NONE */
    int64_t nc_newer;            /* ... NewerNoncurrentVersions; GW_LC_NONE */
    int64_t abort_days;          /* AbortIncompleteMultipartUpload DaysAfterInitiation */
};

struct gw_lc {
    struct gw_lc_rule *rules;
    uint32_t n_rules;
};

/* Parses a <LifecycleConfiguration> (PutBucketLifecycleConfiguration's
 * rules with <Filter>, or the older PutBucketLifecycle's with the rule's own
 * <Prefix>) into *out (release with gw_lc_fini()). A rule without an ID gets
 * a random one, as S3 gives. Errors (*err, with S3's message in why where
 * S3 has one): MaxMessageLengthExceeded (over GW_LC_MAX_BYTES);
 * MalformedXML (bad XML, wrong root, an unknown element, no rule or more
 * than GW_LC_MAX_RULES, a rule without exactly one Status of Enabled or
 * Disabled, with both or neither of Filter and Prefix, a Filter with more
 * than one condition outside <And>, an Expiration without exactly one of
 * Days, Date and ExpiredObjectDeleteMarker, a number or date that does not
 * parse, an element given twice); InvalidArgument (an ID over 255
 * characters or used twice, Days / NoncurrentDays / DaysAfterInitiation not
 * positive, a Date not at midnight UTC); InvalidRequest (a rule with no
 * action, AbortIncompleteMultipartUpload or ExpiredObjectDeleteMarker with a
 * tag or size filter, ObjectSizeGreaterThan not below ObjectSizeLessThan);
 * InvalidTag / BadRequest (a filter tag S3 would refuse on an object);
 * NotImplemented (Transition, NoncurrentVersionTransition: cairn has one
 * storage class). On error *out is empty. */
int gw_lc_parse(const char *body, size_t len, struct gw_lc *out, enum gw_s3_err *err,
                char why[GW_XML_WHY_MAX]);
void gw_lc_fini(struct gw_lc *lc);

/* Writes lc as GetBucketLifecycleConfiguration answers it; the same text is
 * the stored form (gw_lc_parse() reads it back to the same rules). */
void gw_lc_write_xml(const struct gw_lc *lc, struct gw_xml_writer *w);

/* The end of the "day" (day_us long, counted from the Unix epoch: midnight
 * UTC for 24 h) after the one that holds t: S3 rounds "creation + Days" up
 * to the next midnight UTC. */
uint64_t gw_lc_next_boundary(uint64_t t_us, uint64_t day_us);

/* When an object created at created_us falls due under rule's Expiration
 * (Days: the boundary after created + Days days; Date: the date), or when
 * an upload initiated then falls due under its AbortIncompleteMultipartUpload.
 * UINT64_MAX: never (no such action, or past the clock's range). */
uint64_t gw_lc_rule_expire_at(const struct gw_lc_rule *rule, uint64_t created_us,
                              uint64_t day_us);
uint64_t gw_lc_rule_abort_at(const struct gw_lc_rule *rule, uint64_t initiated_us,
                             uint64_t day_us);

/* When a version that became noncurrent at since_us (its successor's
 * write) and is the nth noncurrent one of its key (1: the newest) falls due
 * under rule's NoncurrentVersionExpiration: the boundary after since +
 * NoncurrentDays days, never while nth <= NewerNoncurrentVersions.
 * UINT64_MAX: never. */
uint64_t gw_lc_rule_noncurrent_at(const struct gw_lc_rule *rule, uint64_t since_us,
                                  uint64_t nth, uint64_t day_us);

/* When a delete marker written at created_us that is its key's only
 * version (an "expired object delete marker") may be removed under rule:
 * at once with ExpiredObjectDeleteMarker true, else when Expiration Days /
 * Date would expire an object of that age (S3 does that cleanup too).
 * UINT64_MAX: never. */
uint64_t gw_lc_rule_marker_at(const struct gw_lc_rule *rule, uint64_t created_us,
                              uint64_t day_us);

/* 1 when the rule's filter takes the object key[len] of size bytes whose
 * tags are tags (NULL: none). */
int gw_lc_rule_matches(const struct gw_lc_rule *rule, const char *key, size_t len, uint64_t size,
                       const struct gw_tagset *tags);
/* 1 when the rule's key prefix alone (no tag or size condition) takes key:
 * the test for multipart uploads. */
int gw_lc_rule_prefix_matches(const struct gw_lc_rule *rule, const char *key, size_t len);

#endif
