/* Access control lists of buckets and objects: the S3 model (an owner and
 * up to GW_ACL_MAX_GRANTS grants of READ, WRITE, READ_ACP, WRITE_ACP or
 * FULL_CONTROL to an account id or to the AllUsers / AuthenticatedUsers /
 * LogDelivery groups), built from a canned ACL (x-amz-acl), the
 * x-amz-grant-* headers or an AccessControlPolicy XML body, stored as a short
 * text (bucket meta "acl", object meta ":acl") and written back as S3's XML.
 * Pure data: access.c decides with it, s3_acl.c serves the requests. */
#ifndef GW_ACL_H
#define GW_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "s3_error.h"

#define GW_ACL_MAX_GRANTS 100      /* S3's limit per ACL */
#define GW_ACL_ID_MAX 64           /* an account (owner) id */
#define GW_ACL_XML_MAX_BYTES (64u * 1024)

/* Permissions, as bits so that one grant check covers FULL_CONTROL. */
#define GW_ACL_READ 1u
#define GW_ACL_WRITE 2u
#define GW_ACL_READ_ACP 4u
#define GW_ACL_WRITE_ACP 8u
#define GW_ACL_FULL_CONTROL 16u

enum gw_acl_grantee {
    GW_ACL_USER,            /* id: an account */
    GW_ACL_ALL_USERS,       /* anyone, anonymous included */
    GW_ACL_AUTH_USERS,      /* anyone who signs */
    GW_ACL_LOG_DELIVERY,    /* S3's log writer: kept and shown, grants nothing here */
};

struct gw_acl_grant {
    uint8_t grantee;        /* enum gw_acl_grantee */
    uint8_t perm;           /* one GW_ACL_* bit */
    char id[GW_ACL_ID_MAX + 1]; /* GW_ACL_USER: the account id */
};

/* An ACL; n grants in g. Embedded or heap (gw_acl_dup() makes a compact
 * copy with just n grants). */
struct gw_acl {
    char owner[GW_ACL_ID_MAX + 1];
    size_t n;
    struct gw_acl_grant g[GW_ACL_MAX_GRANTS];
};

/* Who asks, as an ACL sees it: id NULL for an anonymous request. */
struct gw_acl_who {
    const char *id;
};

/* The ACL a canned name gives (x-amz-acl; names compare exactly, as S3
 * does): owner gets FULL_CONTROL, plus the canned extras. bucket_owner is
 * the owner of the bucket the object goes into (bucket-owner-read and
 * bucket-owner-full-control name it; on a bucket they add nothing).
 * Returns CN_OK, or CN_INVAL for an unknown name (acl then private). */
int gw_acl_canned(struct gw_acl *acl, const char *name, size_t len, const char *owner,
                  const char *bucket_owner);

/* Adds the grants of one x-amz-grant-<perm> header value to acl: a comma
 * list of id="...", uri="http://acs.amazonaws.com/groups/global/AllUsers"
 * (or AuthenticatedUsers, or .../s3/LogDelivery) and emailAddress="...".
 * Returns GW_S3_OK, GW_S3_INVALID_ARGUMENT (bad syntax, an unknown uri, an
 * id too long, more than GW_ACL_MAX_GRANTS) or
 * GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS (no e-mail directory here). */
enum gw_s3_err gw_acl_add_grant_header(struct gw_acl *acl, unsigned perm, const char *v,
                                       size_t len);

/* Parses an AccessControlPolicy document (expat, the rules of xml.h:
 * depth, element count, no DOCTYPE) into acl, whose owner is set from
 * <Owner><ID> (empty when absent). Returns GW_S3_OK, or
 * GW_S3_MAX_MESSAGE_LENGTH_EXCEEDED, GW_S3_MALFORMED_ACL_ERROR (not such a
 * document, a grant without a grantee or a known permission) or
 * GW_S3_UNRESOLVABLE_GRANT_BY_EMAIL_ADDRESS; acl is then unspecified. */
enum gw_s3_err gw_acl_parse_xml(struct gw_acl *acl, const char *body, size_t len);

/* The stored text form: "acl1\n<owner>\n" then "<PERM> <kind> <id>\n" per
 * grant. *out is cn_malloc'd (caller frees). */
void gw_acl_encode(const struct gw_acl *acl, char **out, size_t *len);
/* Reads the text form; CN_OK or CN_INVAL (acl then empty). */
int gw_acl_decode(struct gw_acl *acl, const char *s, size_t len);

/* A heap copy holding only acl's n grants (cn_free() it). */
struct gw_acl *gw_acl_dup(const struct gw_acl *acl);

/* The permission bits acl grants who: from grants naming who's id, and from
 * AllUsers (anyone) and AuthenticatedUsers (who signs) unless
 * ignore_public. FULL_CONTROL implies every bit. The owner holds nothing
 * implicitly here: the decision (access.c) says what owners may do. */
unsigned gw_acl_perms(const struct gw_acl *acl, const struct gw_acl_who *who, int ignore_public);

/* 1 when acl grants anything to AllUsers or AuthenticatedUsers. */
int gw_acl_is_public(const struct gw_acl *acl);

/* Writes <AccessControlPolicy> (Owner, AccessControlList with xsi:type'd
 * Grantees) to an xml writer (xml.h); display names come from
 * display(id, arg), which may return NULL (then none is written). */
struct gw_xml_writer;
void gw_acl_write_xml(const struct gw_acl *acl, struct gw_xml_writer *w,
                      const char *(*display)(const char *id, void *arg), void *arg);

/* <OwnershipControls><Rule><ObjectOwnership>X</ObjectOwnership></Rule>:
 * *ownership 0 ObjectWriter, 1 BucketOwnerPreferred, 2 BucketOwnerEnforced
 * (access.h's order). GW_S3_OK, MalformedXML, MaxMessageLengthExceeded. */
enum gw_s3_err gw_acl_parse_ownership_xml(const char *body, size_t len, int *ownership);
/* <PublicAccessBlockConfiguration> with up to four true/false flags (absent:
 * false) into the bits 1 BlockPublicAcls, 2 IgnorePublicAcls, 4
 * BlockPublicPolicy, 8 RestrictPublicBuckets. */
enum gw_s3_err gw_acl_parse_pab_xml(const char *body, size_t len, unsigned *flags);

/* "READ", "WRITE", ... for one permission bit; NULL for anything else. */
const char *gw_acl_perm_name(unsigned perm);

#endif
