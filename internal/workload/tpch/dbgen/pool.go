package dbgen

import (
	"strings"

	"github.com/pgarena/pgarena/internal/lazy"
)

// The text pool (Clause 4.2.2.10, 4.2.3): dbgen fills 300 MB with sentences of its grammar,
// drawn from one stream, and every comment is the pool's substring at a random offset.
// Keeping 300 MB would break the loader's memory budget, so the pool is held compactly: one
// byte per word (the words of all lists number fewer than 249), each followed by a space
// unless an escape byte after it names another separator (", " or a terminator and a
// space). A checkpoint every 128 bytes of text (which word holds that byte, and how far into
// it) lets a comment be materialised from its offset by walking a few words: 47 MB of words
// and 10 MB of checkpoints.

const (
	poolSize       = 300 * 1024 * 1024 // dbgen's TEXT_POOL_SIZE, independent of the scale factor
	poolSeed       = 933588178         // the text pregeneration stream's seed
	checkpointBits = 7                 // a checkpoint every 128 bytes of text
	escapeBase     = 248               // bytes above escapeBase are separators: escapeBase+k is seps[k]
	poolWords      = 47_013_504        // the compact pool's length (words and escapes), a capacity hint
	backBits       = 5                 // poolWords < 1<<(32-backBits)
)

// seps are the separators after a word: a space, the comma of "J, J N", the terminators.
var seps = [...]string{" ", ", ", ". ", "; ", ": ", "? ", "! ", "-- "}

// textPool is the compact pool.
type textPool struct {
	words []byte // word ids, each optionally followed by an escape byte
	// checkpoints[c] locates text byte c<<checkpointBits: the index in words of the word
	// holding it, shifted left by backBits, or'ed with the byte's distance from the word's
	// first byte (a word and its separator are shorter than 1<<backBits).
	checkpoints []uint32
	pieces      [len(seps)][]string
	lens        [len(seps)][256]uint8 // len(pieces[k][w])
}

// sharedPool builds the pool once per process: it does not depend on the scale factor and
// is never written after it is built.
var sharedPool = lazy.Value[*textPool]{New: buildPool}

// grammar is the vocabulary and the phrase distributions used to build the pool.
type grammar struct {
	vocab                                                  []string
	nouns, verbs, adjectives, adverbs, preps, auxes, terms []uint8
	the                                                    uint8
}

func newGrammar() *grammar {
	g := &grammar{}
	ids := map[string]uint8{}
	id := func(w string) uint8 {
		if i, ok := ids[w]; ok {
			return i
		}
		i := uint8(len(g.vocab))
		if len(g.vocab) >= escapeBase || len(w)+len("-- ") >= 1<<backBits {
			panic("dbgen: dists.dss's words do not fit the compact text pool")
		}
		ids[w] = i
		g.vocab = append(g.vocab, w)
		return i
	}
	list := func(name string) []uint8 {
		d := mustDist(name)
		out := make([]uint8, len(d.pick))
		for i, v := range d.pick {
			out[i] = id(d.values[v])
		}
		return out
	}
	g.nouns, g.verbs, g.adjectives = list("nouns"), list("verbs"), list("adjectives")
	g.adverbs, g.preps, g.auxes = list("adverbs"), list("prepositions"), list("auxillaries")
	g.the = id("the")
	// Terminators are separators, not words: map each pick to its separator index.
	d := mustDist("terminators")
	for _, v := range d.pick {
		for k, s := range seps {
			if s == d.values[v]+" " {
				g.terms = append(g.terms, uint8(k))
			}
		}
	}
	if len(g.terms) != len(d.pick) {
		panic("dbgen: unknown terminator in dists.dss")
	}
	return g
}

// draw is one step of the pool's stream: dbgen's UnifInt over [0, n) on a plain seed, so
// that the builder's hot loop keeps its state in registers.
func draw(seed int64, n int) (int64, int) {
	seed = seed * rngMultiplier % rngModulus
	return seed, int(float64(seed) / rngModulus * float64(n))
}

// phrase is a parsed grammar, noun-phrase or verb-phrase syntax: its part-of-speech letters,
// with ',' standing for the comma after the previous word.
type phrase []byte

func parsePhrases(d *dist) []phrase {
	out := make([]phrase, len(d.values))
	for i, v := range d.values {
		for _, tok := range strings.Fields(v) {
			out[i] = append(out[i], tok[0])
			if strings.HasSuffix(tok, ",") {
				out[i] = append(out[i], ',')
			}
		}
	}
	return out
}

// buildPool generates dbgen's pool sentence by sentence (Clause 4.2.2.10): a grammar picks
// the sentence's phrases (N noun phrase, V verb phrase, P preposition, "the" and a noun
// phrase, T terminator), phrases pick words. Each sentence is assembled in a local buffer,
// then appended and indexed. All draws come from one stream, in dbgen's order.
func buildPool() *textPool {
	g := newGrammar()
	sentences, nps, vps := mustDist("grammar"), mustDist("np"), mustDist("vp")
	sentenceSyntax, npSyntax, vpSyntax := parsePhrases(sentences), parsePhrases(nps), parsePhrases(vps)
	var wordLen [256]int
	for i, w := range g.vocab {
		wordLen[i] = len(w)
	}
	p := &textPool{
		words:       make([]byte, 0, poolWords+128),
		checkpoints: make([]uint32, poolSize>>checkpointBits+1),
	}
	seed := int64(poolSeed)
	var r int
	var sent [128]byte // one sentence: word ids and escape bytes
	length, c := 0, 0  // text length so far; next checkpoint
	for length < poolSize {
		n, last := 0, 0
		seed, r = draw(seed, len(sentences.pick))
		for _, part := range sentenceSyntax[sentences.pick[r]] {
			switch part {
			case 'N', 'P':
				if part == 'P' {
					seed, r = draw(seed, len(g.preps))
					last, sent[n], n = n, g.preps[r], n+1
					last, sent[n], n = n, g.the, n+1
				}
				seed, r = draw(seed, len(nps.pick))
				for _, pos := range npSyntax[nps.pick[r]] {
					switch pos {
					case 'J':
						seed, r = draw(seed, len(g.adjectives))
						last, sent[n], n = n, g.adjectives[r], n+1
					case 'D':
						seed, r = draw(seed, len(g.adverbs))
						last, sent[n], n = n, g.adverbs[r], n+1
					case 'N':
						seed, r = draw(seed, len(g.nouns))
						last, sent[n], n = n, g.nouns[r], n+1
					case ',':
						sent[n] = escapeBase + 1
						n++
					}
				}
			case 'V':
				seed, r = draw(seed, len(vps.pick))
				for _, pos := range vpSyntax[vps.pick[r]] {
					switch pos {
					case 'D':
						seed, r = draw(seed, len(g.adverbs))
						last, sent[n], n = n, g.adverbs[r], n+1
					case 'V':
						seed, r = draw(seed, len(g.verbs))
						last, sent[n], n = n, g.verbs[r], n+1
					case 'X':
						seed, r = draw(seed, len(g.auxes))
						last, sent[n], n = n, g.auxes[r], n+1
					}
				}
			case 'T':
				// dbgen erases the last word's space and appends the terminator; the
				// sentence loop restores the space.
				seed, r = draw(seed, len(g.terms))
				sent[last+1] = escapeBase + g.terms[r]
				n = last + 2
			}
		}
		// Append and index the sentence: checkpoint c names the word holding text byte c·128.
		base := len(p.words)
		p.words = append(p.words, sent[:n]...)
		for i := 0; i < n; {
			l, next := wordLen[sent[i]]+1, i+1
			if next < n && sent[next] >= escapeBase {
				l, next = l-1+len(seps[sent[next]-escapeBase]), next+1
			}
			for ; c < len(p.checkpoints) && c<<checkpointBits < length+l; c++ {
				p.checkpoints[c] = uint32(base+i)<<backBits | uint32(c<<checkpointBits-length)
			}
			length += l
			i = next
		}
	}
	for k, sep := range seps {
		p.pieces[k] = make([]string, len(g.vocab))
		for i, w := range g.vocab {
			p.pieces[k][i] = w + sep
			p.lens[k][i] = uint8(len(w) + len(sep))
		}
	}
	return p
}

// next returns the piece (word and separator) at words[i] and the index of the next word.
func (p *textPool) next(i int) (string, int) {
	w := p.words[i]
	if i+1 < len(p.words) && p.words[i+1] >= escapeBase {
		return p.pieces[p.words[i+1]-escapeBase][w], i + 2
	}
	return p.pieces[0][w], i + 1
}

// textRef is a comment's place in the pool: its offset and length, and the checkpoint
// before it. Locating a comment costs a cache miss or two; a row locates its comment first
// so that the loads overlap the row's other work.
type textRef struct {
	off, n int
	cp     uint32
	first  byte // the checkpoint's word (loaded early)
}

func (p *textPool) locate(off, n int) textRef {
	cp := p.checkpoints[off>>checkpointBits]
	return textRef{off: off, n: n, cp: cp, first: p.words[cp>>backBits]}
}

// appendText appends the pool's bytes [r.off, r.off+r.n) to dst.
func (p *textPool) appendText(dst []byte, r textRef) []byte {
	off, n := r.off, r.n
	c, cp := off>>checkpointBits, r.cp
	i, pos := int(cp>>backBits), c<<checkpointBits-int(cp&(1<<backBits-1))
	// Skip the words before off by their lengths alone.
	for words, w := p.words, r.first; ; w = words[i] {
		sep, j := 0, i+1
		if j < len(words) && words[j] >= escapeBase {
			sep, j = int(words[j]-escapeBase), j+1
		}
		l := int(p.lens[sep][w])
		if pos+l > off {
			break
		}
		pos, i = pos+l, j
	}
	for n > 0 {
		piece, j := p.next(i)
		if end := pos + len(piece); end > off {
			part := piece[off-pos:]
			if len(part) > n {
				part = part[:n]
			}
			dst = append(dst, part...)
			n -= len(part)
			off += len(part)
		}
		pos += len(piece)
		i = j
	}
	return dst
}
