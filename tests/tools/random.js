// A seeded random source (mulberry32) for the reference generators: the same data each run.
'use strict'
module.exports = seed => {
  const rand = () => {
    seed = (seed + 0x6D2B79F5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {rand, pick: list => list[Math.floor(rand() * list.length)], chance: p => rand() < p}
}
