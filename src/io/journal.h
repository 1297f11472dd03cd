/* The journal's format (file_journal.c writes and reads the file): a header naming what the
 * output is made of, then fixed-size records, each saying "records [first, end) of the input
 * are durable in the temporary output". All integers little-endian, whatever the host.
 *
 *   header: "SPJRNL01", u64 header bytes, u64 input size, u64 input mtime (s), u64 mtime (ns),
 *           u64 hash of the input's first and last blocks, u64 input record bytes, u64 output
 *           record bytes, u64 input records, u64 output bytes, u32 output format, u32 tag
 *           length, the tag, u32 name length, the temporary output's name (in OUTPUT's
 *           folder), u64 checksum of all the header's bytes before it
 *   record: u64 first, u64 end, u64 checksum of both and the header's checksum
 *
 * The checksums are FNV-1a (64 bits): each step is a bijection of the state, so any one
 * changed byte changes the sum. Seeding the records with the header's checksum makes a record
 * copied from another journal invalid. A reader stops at the first record that is short or
 * does not check: what follows a torn or damaged record is never believed. */
#ifndef SP_IO_JOURNAL_H
#define SP_IO_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define SP_JOURNAL_RECORD_BYTES 24
#define SP_JOURNAL_TEXT_MAX 4096 /* the tag's and the name's longest */
#define SP_JOURNAL_FORMAT_RAW 1  /* the output's records as the last stage gives them */

/* What a journal is about; a resumed run must have all of it equal. */
typedef struct sp_journal_id {
    uint64_t input_size, input_mtime_s, input_mtime_ns, input_hash;
    uint64_t in_record_bytes, out_record_bytes, n_records, out_bytes;
    uint32_t format;
    const char *tag; /* the caller's text for the stages and their parameters */
    size_t tag_len;
    const char *temp_name; /* the temporary output's last component */
    size_t name_len;
} sp_journal_id;

uint64_t sp_journal_hash(uint64_t h, const void *bytes, size_t n);
#define SP_JOURNAL_HASH_SEED 0xcbf29ce484222325ull

/* The header for `id` into buf (cap bytes): its size, or 0 when it does not fit. *key: the
 * header's checksum, which seeds the records' checksums. */
size_t sp_journal_header_encode(const sp_journal_id *id, unsigned char *buf, size_t cap,
                                uint64_t *key);
/* The header at the start of buf (n bytes): its size and *id (tag and name pointing into
 * buf), *key; 0 when it is short, of another format or does not check. */
size_t sp_journal_header_decode(const unsigned char *buf, size_t n, sp_journal_id *id,
                                uint64_t *key);
void sp_journal_record_encode(uint64_t key, size_t first, size_t end,
                              unsigned char out[SP_JOURNAL_RECORD_BYTES]);
/* 1 and *first, *end when the record checks (and first < end <= n_records), else 0. */
int sp_journal_record_decode(uint64_t key, const unsigned char in[SP_JOURNAL_RECORD_BYTES],
                             uint64_t n_records, size_t *first, size_t *end);

#endif
