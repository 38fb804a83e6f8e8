package dbgen

import "sync"

// The text pool (Clause 4.2.2.10, 4.2.3): dbgen fills 300 MB with sentences of its grammar,
// drawn from one stream, and every comment is the pool's substring at a random offset.
// Keeping 300 MB would break the loader's memory budget, so the pool is held compactly: one
// byte per word (the words of all lists number fewer than 249), each followed by a space
// unless an escape byte after it names another separator (", " or a terminator and a
// space). A checkpoint every 128 bytes of text (which word holds that byte, and how far into
// it) lets a comment be materialised from its offset by walking a few words. About 60 MB.

const (
	poolSize       = 300 * 1024 * 1024 // dbgen's TEXT_POOL_SIZE, independent of the scale factor
	poolSeed       = 933588178         // the text pregeneration stream's seed
	checkpointBits = 7                 // a checkpoint every 128 bytes of text
	escapeBase     = 248               // bytes above escapeBase are separators: escapeBase+k is seps[k]
)

// seps are the separators after a word: a space, the comma of "J, J N", the terminators.
var seps = [...]string{" ", ", ", ". ", "; ", ": ", "? ", "! ", "-- "}

// textPool is the compact pool.
type textPool struct {
	words  []byte   // word ids, each optionally followed by an escape byte
	cpWord []uint32 // checkpoint c: index in words of the word holding text byte c<<checkpointBits
	cpBack []uint8  // ... and that byte's distance from the word's first byte
	pieces [len(seps)][]string
}

// sharedPool builds the pool once per process: it does not depend on the scale factor and
// is never written after it is built.
var sharedPool = sync.OnceValue(buildPool)

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
		if len(g.vocab) >= escapeBase {
			panic("dbgen: too many words for the compact text pool")
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

// poolBuilder appends words and tracks the text's length.
type poolBuilder struct {
	words   []byte
	length  int
	last    int // index of the last word in words
	lastLen int // its text length without the separator
	vocab   []string
}

func (b *poolBuilder) word(id uint8) {
	b.last = len(b.words)
	b.words = append(b.words, id)
	b.lastLen = len(b.vocab[id])
	b.length += b.lastLen + 1
}

// setSep replaces the last word's trailing space with seps[k] (dbgen erases the space and
// appends the punctuation; the sentence loop then restores the space).
func (b *poolBuilder) setSep(k uint8) {
	b.words = append(b.words[:b.last+1], escapeBase+k)
	b.length += len(seps[k]) - 1
}

func pickFrom(s *stream, table []uint8) uint8 { return table[s.intn(0, int32(len(table))-1)] }

func buildPool() *textPool {
	g := newGrammar()
	sentences, nps, vps := mustDist("grammar"), mustDist("np"), mustDist("vp")
	s := newStream(poolSeed, 1<<30)
	b := &poolBuilder{words: make([]byte, 0, 48<<20), vocab: g.vocab}
	nounPhrase := func() {
		syntax := nps.random(&s)
		for i := 0; i < len(syntax); i++ {
			switch syntax[i] {
			case 'J':
				b.word(pickFrom(&s, g.adjectives))
			case 'D':
				b.word(pickFrom(&s, g.adverbs))
			case 'N':
				b.word(pickFrom(&s, g.nouns))
			case ',':
				b.setSep(1)
			}
		}
	}
	verbPhrase := func() {
		syntax := vps.random(&s)
		for i := 0; i < len(syntax); i += 2 {
			switch syntax[i] {
			case 'D':
				b.word(pickFrom(&s, g.adverbs))
			case 'V':
				b.word(pickFrom(&s, g.verbs))
			case 'X':
				b.word(pickFrom(&s, g.auxes))
			}
		}
	}
	for b.length < poolSize {
		syntax := sentences.random(&s)
		for i := 0; i < len(syntax); i += 2 {
			switch syntax[i] {
			case 'N':
				nounPhrase()
			case 'V':
				verbPhrase()
			case 'P':
				b.word(pickFrom(&s, g.preps))
				b.word(g.the)
				nounPhrase()
			case 'T':
				b.setSep(pickFrom(&s, g.terms))
			}
		}
	}
	p := &textPool{words: b.words}
	for k, sep := range seps {
		p.pieces[k] = make([]string, len(g.vocab))
		for i, w := range g.vocab {
			p.pieces[k][i] = w + sep
		}
	}
	p.index()
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

func (p *textPool) index() {
	n := poolSize>>checkpointBits + 1
	p.cpWord = make([]uint32, n)
	p.cpBack = make([]uint8, n)
	pos, c := 0, 0
	for i := 0; i < len(p.words) && c < n; {
		piece, j := p.next(i)
		end := pos + len(piece)
		for ; c < n && c<<checkpointBits < end; c++ {
			p.cpWord[c] = uint32(i)
			p.cpBack[c] = uint8(c<<checkpointBits - pos)
		}
		pos, i = end, j
	}
}

// appendText appends the pool's bytes [off, off+n) to dst.
func (p *textPool) appendText(dst []byte, off, n int) []byte {
	c := off >> checkpointBits
	i := int(p.cpWord[c])
	pos := c<<checkpointBits - int(p.cpBack[c])
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
