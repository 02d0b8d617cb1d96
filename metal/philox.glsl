// Philox4x32-10, the CPU's counter-based generator (pcp/core/random.cpp): four 32-bit words per
// 128-bit counter under a 64-bit key. Used by dropout.comp and dropout4.comp.
uvec4 philox(uvec2 key, uvec4 c) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ key.x, lo1, hi0 ^ c.w ^ key.y, lo0);
    key += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
