/* nl_fixture.h: the recorded replies of tests/fixtures and lookups in the
 * snapshots parsed from them. */
#ifndef NL_FIXTURE_H
#define NL_FIXTURE_H

#include "core/model/nl_snapshot.h"

#include <stddef.h>

/* Reads a fixture file of nl_test_fixture_dir into a malloc'd buffer (its
 * length in *len); returns NULL if missing. */
char *nl_test_read_fixture(const char *name, size_t *len);

/* The first stream, or consumer (of any stream), named name in set; NULL
 * when there is none. */
const nl_stream_snap *nl_test_stream(const nl_snapshot_set *set,
                                     const char *name);
const nl_consumer_snap *nl_test_consumer(const nl_snapshot_set *set,
                                         const char *name);

#endif
