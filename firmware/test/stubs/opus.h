// libopus (as the arduino-libopus library ships it), host stub: the encoder and decoder calls
// firmware/src makes, with libopus's signatures. The host "codec" is a stand-in, not Opus:
// an encoded mic frame is 'L', its mean level and its sample count (u16 LE each), enough for
// the fake server's endpointing; a packet to decode is 'P' followed by 16-bit PCM. The host
// tests cover framing, state and timing; the real codec is linked only in the -ws device build.
#pragma once

#include <cstdint>

typedef int16_t opus_int16;
typedef int32_t opus_int32;
typedef struct OpusEncoder OpusEncoder;
typedef struct OpusDecoder OpusDecoder;

#define OPUS_OK 0
#define OPUS_BAD_ARG -1
#define OPUS_BUFFER_TOO_SMALL -2
#define OPUS_INVALID_PACKET -4
#define OPUS_APPLICATION_VOIP 2048
#define OPUS_SET_COMPLEXITY_REQUEST 4010
#define __opus_check_int(x) (((void)((x) == (opus_int32)0)), (opus_int32)(x))
#define OPUS_SET_COMPLEXITY(x) OPUS_SET_COMPLEXITY_REQUEST, __opus_check_int(x)

OpusEncoder* opus_encoder_create(opus_int32 Fs, int channels, int application, int* error);
int opus_encoder_ctl(OpusEncoder* st, int request, ...);
opus_int32 opus_encode(OpusEncoder* st, const opus_int16* pcm, int frame_size, unsigned char* data,
                       opus_int32 max_data_bytes);
void opus_encoder_destroy(OpusEncoder* st);
OpusDecoder* opus_decoder_create(opus_int32 Fs, int channels, int* error);
int opus_decode(OpusDecoder* st, const unsigned char* data, opus_int32 len, opus_int16* pcm,
                int frame_size, int decode_fec);
void opus_decoder_destroy(OpusDecoder* st);
