#include "bootstrap/wire.hpp"

#include <gtest/gtest.h>

#include <random>

#include "grove/error.hpp"

namespace grove::wire {
namespace {

Blob bytes_of(std::string_view text) {
  Blob out;
  for (char c : text)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

// Encodes, then decodes through a FrameReader fed one byte at a time, so
// every split point of the stream is exercised.
Frame round_trip(const Frame& frame) {
  const std::vector<std::byte> encoded = encode_frame(frame);
  FrameReader reader;
  std::optional<Frame> out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    EXPECT_FALSE(out) << "frame complete before its last byte";
    reader.feed(std::span(encoded).subspan(i, 1));
    out = reader.next();
  }
  EXPECT_TRUE(out);
  EXPECT_EQ(reader.buffered(), 0u);
  return out.value_or(Frame{});
}

void expect_protocol_error(const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "malformed input accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol) << e.what();
  }
}

TEST(BootstrapWire, HelloWelcomeRefuseRoundTrip) {
  const Hello hello =
      decode_hello(round_trip(encode(Hello{7, "00112233445566778899aabbccddeeff"})));
  EXPECT_EQ(hello.rank, 7);
  EXPECT_EQ(hello.key, "00112233445566778899aabbccddeeff");

  const Welcome welcome = decode_welcome(round_trip(encode(Welcome{3, 16})));
  EXPECT_EQ(welcome.rank, 3);
  EXPECT_EQ(welcome.size, 16);

  EXPECT_EQ(decode_refuse(round_trip(encode(Refuse{"wrong job key"}))).reason, "wrong job key");
}

TEST(BootstrapWire, CollectivesRoundTrip) {
  const CollectiveRequest ag = decode_collective_request(round_trip(
      encode(CollectiveRequest{42, bytes_of("blob bytes")}, FrameType::allgather_request)));
  EXPECT_EQ(ag.seq, 42u);
  EXPECT_EQ(ag.blob, bytes_of("blob bytes"));

  const CollectiveRequest empty = decode_collective_request(
      round_trip(encode(CollectiveRequest{1, {}}, FrameType::allgather_request)));
  EXPECT_TRUE(empty.blob.empty());

  const Frame barrier = round_trip(encode(CollectiveRequest{9, {}}, FrameType::barrier_request));
  EXPECT_EQ(barrier.type, FrameType::barrier_request);
  EXPECT_EQ(decode_collective_request(barrier).seq, 9u);

  CollectiveReply reply;
  reply.seq = 5;
  reply.blobs = {bytes_of("a"), std::nullopt, Blob{}, bytes_of("longer blob")};
  const CollectiveReply back = decode_collective_reply(round_trip(encode(reply)));
  EXPECT_EQ(back.seq, 5u);
  ASSERT_EQ(back.blobs.size(), 4u);
  EXPECT_EQ(back.blobs[0], bytes_of("a"));
  EXPECT_FALSE(back.blobs[1]);
  ASSERT_TRUE(back.blobs[2]);
  EXPECT_TRUE(back.blobs[2]->empty());
  EXPECT_EQ(back.blobs[3], bytes_of("longer blob"));

  const CollectiveError error = decode_collective_error(
      round_trip(encode(CollectiveError{6, Errc::timeout, "rank 3 did not join"})));
  EXPECT_EQ(error.seq, 6u);
  EXPECT_EQ(error.code, Errc::timeout);
  EXPECT_EQ(error.message, "rank 3 did not join");

  const FailureNotice notice =
      decode_notice(round_trip(encode(FailureNotice{4, 2, "killed by signal 9 (Killed)"})));
  EXPECT_EQ(notice.rank, 4);
  EXPECT_EQ(notice.version, 2u);
  EXPECT_EQ(notice.how, "killed by signal 9 (Killed)");
}

TEST(BootstrapWire, ReaderSplitsBackToBackFrames) {
  std::vector<std::byte> stream;
  for (int i = 0; i < 3; ++i) {
    const Frame f = encode(Welcome{i, 3});
    append_frame(stream, f.type, f.payload);
  }
  FrameReader reader;
  reader.feed(stream);
  for (int i = 0; i < 3; ++i) {
    auto frame = reader.next();
    ASSERT_TRUE(frame);
    EXPECT_EQ(decode_welcome(*frame).rank, i);
  }
  EXPECT_FALSE(reader.next());
}

TEST(BootstrapWire, TruncatedInputWaitsThenPayloadChecksReject) {
  // A stream cut short is not an error for the reader: it waits for more.
  const std::vector<std::byte> encoded = encode_frame(encode(Hello{1, "key"}));
  FrameReader reader;
  reader.feed(std::span(encoded).first(encoded.size() - 1));
  EXPECT_FALSE(reader.next());

  // A payload shorter than its fields is rejected by the decoder.
  Frame hello = encode(Hello{1, "key"});
  hello.payload.pop_back();
  expect_protocol_error([&] { decode_hello(hello); });
  Frame welcome = encode(Welcome{1, 2});
  welcome.payload.resize(3);
  expect_protocol_error([&] { decode_welcome(welcome); });
  Frame reply_frame = encode(CollectiveReply{1, {bytes_of("abc")}});
  reply_frame.payload.pop_back();
  expect_protocol_error([&] { decode_collective_reply(reply_frame); });
  // Trailing bytes are rejected too.
  Frame notice = encode(FailureNotice{1, 1, "x"});
  notice.payload.push_back(std::byte{0});
  expect_protocol_error([&] { decode_notice(notice); });
}

TEST(BootstrapWire, OversizedLengthRejectedFromTheHeader) {
  // Header only: the reader must refuse before waiting for 4 GiB of payload.
  std::vector<std::byte> header = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
                                   std::byte{0xff}, std::byte{1}};
  FrameReader reader;
  reader.feed(header);
  expect_protocol_error([&] { reader.next(); });

  // A stranger's limit is far smaller than an admitted rank's.
  const std::vector<std::byte> big = encode_frame(encode(Refuse{std::string(1000, 'x')}));
  FrameReader small(kMaxHelloPayload);
  small.feed(big);
  expect_protocol_error([&] { small.next(); });
}

TEST(BootstrapWire, UnknownTypeAndBadFieldsRejected) {
  for (uint8_t type : {0, 9, 200}) {
    std::vector<std::byte> frame = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0},
                                    std::byte{type}};
    FrameReader reader;
    reader.feed(frame);
    expect_protocol_error([&] { reader.next(); });
  }
  // A decoder given the wrong frame type.
  expect_protocol_error([] { decode_welcome(encode(Hello{0, "k"})); });
  // Welcome with rank >= size; notice with version 0; bad presence flag; bad error code.
  expect_protocol_error([] { decode_welcome(encode(Welcome{4, 4})); });
  expect_protocol_error([] { decode_notice(encode(FailureNotice{1, 0, ""})); });
  Frame reply = encode(CollectiveReply{1, {bytes_of("a")}});
  reply.payload[12] = std::byte{7};  // the presence flag follows seq (8) and count (4)
  expect_protocol_error([&] { decode_collective_reply(reply); });
  Frame error = encode(CollectiveError{1, Errc::timeout, "m"});
  error.payload[8] = std::byte{250};  // the error code follows seq
  expect_protocol_error([&] { decode_collective_error(error); });
  // An entry count that cannot fit in the payload is refused before allocating.
  Frame huge_count = encode(CollectiveReply{1, {}});
  huge_count.payload[8] = huge_count.payload[9] = huge_count.payload[10] = std::byte{0xff};
  expect_protocol_error([&] { decode_collective_reply(huge_count); });
  // An over-long key.
  expect_protocol_error([] {
    decode_hello(encode(Hello{0, std::string(kMaxKeyLength + 1, 'k')}));
  });
}

// Random bytes, and random mutations of valid frames, must only ever produce
// frames or grove::Error, never a crash or another exception.
TEST(BootstrapWire, FuzzNeverCrashes) {
  std::mt19937_64 rng(12345);
  std::vector<Frame> seeds = {
      encode(Hello{2, "0123456789abcdef"}),
      encode(Welcome{1, 4}),
      encode(Refuse{"no"}),
      encode(CollectiveRequest{3, bytes_of("xyz")}, FrameType::allgather_request),
      encode(CollectiveRequest{3, {}}, FrameType::barrier_request),
      encode(CollectiveReply{3, {bytes_of("p"), std::nullopt, bytes_of("qq")}}),
      encode(CollectiveError{3, Errc::peer_failed, "rank 1 exited"}),
      encode(FailureNotice{1, 1, "exited with code 1"}),
  };
  auto decode_any = [](const Frame& f) {
    switch (f.type) {
      case FrameType::hello:
        decode_hello(f);
        break;
      case FrameType::welcome:
        decode_welcome(f);
        break;
      case FrameType::refuse:
        decode_refuse(f);
        break;
      case FrameType::allgather_request:
      case FrameType::barrier_request:
        decode_collective_request(f);
        break;
      case FrameType::collective_reply:
        decode_collective_reply(f);
        break;
      case FrameType::collective_error:
        decode_collective_error(f);
        break;
      case FrameType::notice:
        decode_notice(f);
        break;
    }
  };
  int errors = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::vector<std::byte> stream;
    if (iteration % 2 == 0) {
      stream.resize(rng() % 64);
      for (auto& b : stream)
        b = static_cast<std::byte>(rng());
    } else {
      stream = encode_frame(seeds[rng() % seeds.size()]);
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i)
        stream[rng() % stream.size()] = static_cast<std::byte>(rng());
      if (rng() % 4 == 0) stream.resize(rng() % (stream.size() + 1));
    }
    FrameReader reader(1 << 16);
    try {
      reader.feed(stream);
      while (auto frame = reader.next())
        decode_any(*frame);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::protocol) << e.what();
      ++errors;
    }
    // Payload decoders are also fed the raw bytes directly, under every type.
    Frame raw;
    raw.payload = stream;
    raw.type = static_cast<FrameType>(1 + rng() % 8);
    try {
      decode_any(raw);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::protocol) << e.what();
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace grove::wire
