/* XML for the S3 API. A writer that builds response documents (ListBuckets,
 * ListObjects v1/v2, CopyObjectResult, DeleteResult, multipart results)
 * straight into an evbuffer, and expat-based parsers, with strict limits, for
 * the request bodies the gateway reads: multi-object Delete,
 * CompleteMultipartUpload, CreateBucketConfiguration, Tagging and
 * CORSConfiguration. */
#ifndef GW_XML_H
#define GW_XML_H

#include <stddef.h>
#include <stdint.h>

#include "cors.h"
#include "s3_error.h"
#include "tagset.h"

struct evbuffer;

/* ---- writer ---------------------------------------------------------- */

#define GW_XML_MAX_DEPTH 16
/* The namespace S3 puts on every response root element. */
#define GW_XML_S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"

/* Embedded by the caller; no heap. Element names are NOT escaped and are kept
 * by pointer until their element closes: pass string literals. An error
 * (evbuffer could not grow, depth over GW_XML_MAX_DEPTH, close with nothing
 * open) is sticky and reported by gw_xml_writer_finish(); the calls after it
 * do nothing. */
struct gw_xml_writer {
    struct evbuffer *out;
    int depth;
    int failed;
    int replaced;   /* some element text had characters XML 1.0 cannot
                       carry; they were written as U+FFFD (gw_xml_escape):
                       a listing refuses such a document without
                       encoding-type=url rather than show altered keys */
    const char *stack[GW_XML_MAX_DEPTH];
};

/* Starts a document on out; writes the `<?xml version="1.0"
 * encoding="UTF-8"?>` declaration and a newline. */
void gw_xml_writer_init(struct gw_xml_writer *w, struct evbuffer *out);
/* <name> and, with xmlns non-NULL, <name xmlns="..."> (xmlns escaped). */
void gw_xml_open(struct gw_xml_writer *w, const char *name);
void gw_xml_open_ns(struct gw_xml_writer *w, const char *name, const char *xmlns);
/* <name a1="v1" a2="v2"> from {a1, v1, a2, v2, ..., NULL}: attribute names
 * as given (literals), values escaped. */
void gw_xml_open_attrs(struct gw_xml_writer *w, const char *name, const char *const *attrs);
/* Closes the innermost open element. */
void gw_xml_close(struct gw_xml_writer *w);
/* <name>text</name> with text escaped; text may hold any bytes of len. */
void gw_xml_elem(struct gw_xml_writer *w, const char *name, const char *text, size_t len);
void gw_xml_elem_str(struct gw_xml_writer *w, const char *name, const char *text);
void gw_xml_elem_u64(struct gw_xml_writer *w, const char *name, uint64_t v);
void gw_xml_elem_i64(struct gw_xml_writer *w, const char *name, int64_t v);
/* "true" / "false" */
void gw_xml_elem_bool(struct gw_xml_writer *w, const char *name, int v);
/* ISO-8601 with milliseconds, UTC: 2026-12-02T16:17:46.000Z (ms since epoch). */
void gw_xml_elem_time_ms(struct gw_xml_writer *w, const char *name, int64_t ms);
/* <name/> */
void gw_xml_empty(struct gw_xml_writer *w, const char *name);
/* Returns CN_OK when every element was closed and nothing failed, else
 * CN_ERR (out holds a partial document: the caller drains it and answers
 * InternalError). */
int gw_xml_writer_finish(struct gw_xml_writer *w);

/* Appends text escaped for element content or attribute values: & < > " '
 * become entities and CR becomes &#xD; (so it survives a parser's line-end
 * normalisation). What XML 1.0 cannot carry at all, even as a character
 * reference (C0 controls but TAB, LF and CR; U+FFFE, U+FFFF; bytes that are
 * not UTF-8), is written as U+FFFD, one per byte: the document stays
 * well-formed whatever the text (a query parameter echoed back may hold
 * anything). Callers that must not alter text check gw_xml_text_valid().
 * Returns CN_OK or CN_ERR (evbuffer could not grow). */
int gw_xml_escape(struct evbuffer *out, const char *text, size_t len);

/* The <Message> of the InvalidArgument that a listing answers when its
 * document would need gw_xml_escape() to alter text (w->replaced) and the
 * client did not ask for encoding-type=url. */
#define GW_XML_NEEDS_URL_MESSAGE "The listing holds characters that XML 1.0 cannot carry " \
    "(in a key or an echoed parameter); list with encoding-type=url"

/* 1 when text is UTF-8 whose every character XML 1.0 allows (so that
 * gw_xml_escape() writes it unaltered), else 0. */
int gw_xml_text_valid(const char *text, size_t len);

/* ---- request-body parsers -------------------------------------------- */

/* Limits. A body over max_bytes is refused before parsing with
 * MaxMessageLengthExceeded; depth or element count over the limits, a
 * DOCTYPE/entity declaration, unknown entities, bad UTF-8 or any syntax
 * error give MalformedXML. The namespace (or none) of elements is ignored:
 * only local names count. Unknown elements are skipped (bounded by the same
 * limits). */
#define GW_XML_MAX_DEPTH_IN 8
#define GW_XML_DELETE_MAX_BYTES (2u * 1024 * 1024)
#define GW_XML_DELETE_MAX_OBJECTS 1000
#define GW_XML_COMPLETE_MAX_BYTES (4u * 1024 * 1024)
#define GW_XML_COMPLETE_MAX_PARTS 10000
#define GW_XML_CREATE_BUCKET_MAX_BYTES (64u * 1024)

/* One <Object> of a multi-object Delete. Strings are heap copies owned by
 * the gw_xml_delete, NUL-terminated for convenience; the length is the truth
 * (XML cannot carry NUL, so there is none inside). version_id is NULL when
 * absent. The key is NOT checked against S3 key rules (length, UTF-8 is
 * guaranteed by expat): per-key errors go into the DeleteResult, the caller
 * checks each with gw_s3_names_key_check(). */
struct gw_xml_delete_obj {
    char *key;
    size_t key_len;
    char *version_id;
    size_t version_id_len;
};

struct gw_xml_delete {
    int quiet;                       /* <Quiet>true</Quiet> (case-insensitive) */
    size_t n_objects;
    struct gw_xml_delete_obj *objects;
};

/* Parses <Delete>[<Quiet>true|false</Quiet>]<Object><Key>k</Key>
 * [<VersionId>v</VersionId>]</Object>...</Delete>. Returns CN_OK and fills
 * *out (release with gw_xml_delete_fini()), or an error code with *err set:
 * MaxMessageLengthExceeded (body too big), MalformedXML (bad XML, root not
 * Delete, an Object without exactly one Key, more than one VersionId, zero
 * objects or more than GW_XML_DELETE_MAX_OBJECTS, Quiet not true/false).
 * On error *out is left empty (nothing to free, fini is still safe). */
int gw_xml_parse_delete(const char *body, size_t len, struct gw_xml_delete *out,
                        enum gw_s3_err *err);
void gw_xml_delete_fini(struct gw_xml_delete *d);

/* One <Part> of CompleteMultipartUpload. etag is the value with white space
 * and one pair of surrounding double quotes removed (clients send both
 * "\"abc\"" and "abc"); checksum_* are the base64 texts as sent, NULL when
 * absent. All owned by the gw_xml_complete. */
struct gw_xml_part {
    uint32_t part_number;            /* 1..10000 */
    char *etag;
    size_t etag_len;
    char *checksum_crc32;
    char *checksum_crc32c;
    char *checksum_crc64nvme;
    char *checksum_sha1;
    char *checksum_sha256;
};

struct gw_xml_complete {
    size_t n_parts;
    struct gw_xml_part *parts;       /* in document order, strictly ascending */
};

/* Parses <CompleteMultipartUpload><Part><PartNumber>n</PartNumber>
 * <ETag>e</ETag>[<ChecksumCRC32>..</ChecksumCRC32>...]</Part>...
 * </CompleteMultipartUpload>. Errors (*err): MaxMessageLengthExceeded,
 * MalformedXML (bad XML, wrong root, zero parts or more than
 * GW_XML_COMPLETE_MAX_PARTS, a Part without exactly one PartNumber and one
 * ETag, PartNumber not a decimal number), InvalidArgument (PartNumber outside
 * 1..10000), InvalidPartOrder (part numbers not strictly ascending).
 * On error *out is left empty. */
int gw_xml_parse_complete(const char *body, size_t len, struct gw_xml_complete *out,
                          enum gw_s3_err *err);
void gw_xml_complete_fini(struct gw_xml_complete *c);

#define GW_XML_LOCATION_MAX 63

/* Parses <CreateBucketConfiguration><LocationConstraint>r
 * </LocationConstraint></CreateBucketConfiguration> into location[] (white
 * space trimmed, NUL-terminated, "" when the element is absent or empty or
 * when len == 0: an empty body is a valid "no configuration"). Errors:
 * MaxMessageLengthExceeded, MalformedXML (bad XML, wrong root),
 * InvalidLocationConstraint (longer than GW_XML_LOCATION_MAX or characters
 * other than [a-zA-Z0-9-_]). Deciding whether the region is acceptable
 * (IllegalLocationConstraintException) is the caller's job. */
int gw_xml_parse_create_bucket(const char *body, size_t len,
                               char location[GW_XML_LOCATION_MAX + 1], enum gw_s3_err *err);

#define GW_XML_TAGGING_MAX_BYTES (64u * 1024)

/* Parses the body of PutObjectTagging, <Tagging><TagSet><Tag><Key>k</Key>
 * <Value>v</Value></Tag>...</TagSet></Tagging> (texts as sent, white space
 * kept), into out, each tag checked by gw_tagset_add(). An empty TagSet is
 * valid: no tags. Errors (*err): MaxMessageLengthExceeded, MalformedXML (bad
 * XML, wrong root, no TagSet or more than one, a Tag without exactly one Key
 * and one Value), and gw_tagset_add()'s BadRequest or InvalidTag with S3's
 * message in *why (NULL for the others). On error out is left empty. */
int gw_xml_parse_tagging(const char *body, size_t len, struct gw_tagset *out,
                         enum gw_s3_err *err, const char **why);

#define GW_XML_WHY_MAX 640

/* Parses <CORSConfiguration><CORSRule>[<ID>..</ID>]<AllowedOrigin>..
 * </AllowedOrigin>...<AllowedMethod>..</AllowedMethod>...[<AllowedHeader>..
 * </AllowedHeader>...][<ExposeHeader>..</ExposeHeader>...][<MaxAgeSeconds>n
 * </MaxAgeSeconds>]</CORSRule>...</CORSConfiguration> into *out (release
 * with gw_cors_fini()). Errors (*err): MaxMessageLengthExceeded (over
 * GW_CORS_MAX_BYTES), MalformedXML (bad XML, wrong root, no rule or more
 * than GW_CORS_MAX_RULES, a rule without an origin or a method, MaxAgeSeconds
 * not a number, two IDs or an ID over GW_CORS_ID_MAX), InvalidRequest with
 * why set as S3 words it (a method other than GET, PUT, POST, DELETE, HEAD;
 * an origin or header with more than one '*'). On error *out is empty. */
int gw_xml_parse_cors(const char *body, size_t len, struct gw_cors *out, enum gw_s3_err *err,
                      char why[GW_XML_WHY_MAX]);

/* A walk over a request body for parsers kept in their own module
 * (lifecycle.c), with the limits and refusals of the parsers above (depth
 * GW_XML_MAX_DEPTH_IN, max_elems elements, no DOCTYPE or entities, a leaf's
 * text at most 8 KiB). start() is called as an element opens, end() as it
 * closes with the element's text as sent (a leaf's value; for an element
 * with children, only the text after the last one);
 * depth is 1 for the root, name the local name (namespace dropped). A
 * callback that returns other than GW_S3_OK stops the walk with that error.
 * Returns CN_OK, or an error code with *err set (MaxMessageLengthExceeded
 * over max_bytes, MalformedXML, or a callback's). */
struct gw_xml_walk_cbs {
    enum gw_s3_err (*start)(void *user, int depth, const char *name);
    enum gw_s3_err (*end)(void *user, int depth, const char *name, const char *text,
                          size_t len);
};
int gw_xml_walk(const char *body, size_t len, size_t max_bytes, size_t max_elems,
                const struct gw_xml_walk_cbs *cbs, void *user, enum gw_s3_err *err);

#endif
