/* provenance.h - what a run read, for the output's root attributes: the SHA-256 of every input
 * file (OpenSSL's libcrypto). Plain POSIX + libcrypto; no MPI. */
#ifndef TALLY_PROVENANCE_H
#define TALLY_PROVENANCE_H

#include "tally/err.h"
#include "tally/str.h"

/* SHA-256 of the file at path as 64 lower-case hex digits into hex[65]. TL_EIO with the reason
 * when it cannot be read. Reads it in 1 MiB blocks (memory does not grow with the file). */
tl_status tl_sha256_file(const char *path, char hex[65], tl_err *err);

/* Appends to `json` a JSON object {"<path>": "<sha256>", ...} of the n paths, in the order given
 * (a path given twice appears once, hashed once), and, when `files` is not NULL, to it a JSON
 * array of the same files [{"path": absolute (realpath), "what": whats[i], "sha256": ...}, ...]
 * (whats may be NULL). */
tl_status tl_sha256_files_json(const char *const *paths, const char *const *whats, int n, tl_buf *json,
                               tl_buf *files, tl_err *err);

#endif
