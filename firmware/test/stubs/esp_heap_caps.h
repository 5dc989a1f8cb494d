// ESP-IDF heap capabilities, host stub: every capability is plain malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#define MALLOC_CAP_8BIT (1 << 2)
#define MALLOC_CAP_SPIRAM (1 << 10)

void* heap_caps_malloc(size_t size, uint32_t caps);
