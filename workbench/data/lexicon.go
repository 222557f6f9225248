package data

// The lexicon of the synthetic concept corpus. Every word belongs to at most one value of each concept, so a
// word's Marked labels are a property of the word alone (see SyntheticWords).

// Values of the fixed concepts. Index order is the label value.
var (
	genderValues = []string{"male", "female"}
	numberValues = []string{"singular", "plural"}
)

const (
	male, female     = 0, 1
	singular, plural = 0, 1
)

// inflected is a word with its two forms along one concept (gender: male/female; number: singular/plural).
type inflected [2]string

// Referent vocabulary, indexed [gender].
var (
	pronounSubj = inflected{"he", "she"}
	pronounPoss = inflected{"his", "her"}
	pronounRefl = inflected{"himself", "herself"}
	// roles[i][g] is a gendered noun, rolesPlural[i][g] its plural.
	roles = []inflected{
		{"man", "woman"}, {"king", "queen"}, {"boy", "girl"}, {"father", "mother"}, {"brother", "sister"},
		{"uncle", "aunt"}, {"prince", "princess"}, {"husband", "wife"}, {"son", "daughter"}, {"nephew", "niece"},
		{"gentleman", "lady"}, {"monk", "nun"},
	}
	rolesPlural = []inflected{
		{"men", "women"}, {"kings", "queens"}, {"boys", "girls"}, {"fathers", "mothers"}, {"brothers", "sisters"},
		{"uncles", "aunts"}, {"princes", "princesses"}, {"husbands", "wives"}, {"sons", "daughters"},
		{"nephews", "nieces"}, {"gentlemen", "ladies"}, {"monks", "nuns"},
	}
	names = [2][]string{
		{"John", "Peter", "David", "Omar", "Kenji", "Luca", "Ravi", "Pierre", "Carlos", "Samuel"},
		{"Mary", "Anna", "Sarah", "Fatima", "Yuki", "Sofia", "Priya", "Claire", "Lucia", "Grace"},
	}
	// Companions after a possessive ("with her friends"); plural, no gender.
	companions = []string{"friends", "cousins", "neighbors", "children", "students", "colleagues"}
)

// country is one value of the "country" concept: its name, demonym and cities.
type country struct {
	name, demonym string
	cities        []string
}

var countries = []country{
	{"France", "French", []string{"Paris", "Lyon", "Marseille", "Toulouse"}},
	{"Japan", "Japanese", []string{"Tokyo", "Osaka", "Kyoto", "Nagoya"}},
	{"Brazil", "Brazilian", []string{"Rio", "Recife", "Salvador", "Manaus"}},
	{"Egypt", "Egyptian", []string{"Cairo", "Luxor", "Alexandria", "Aswan"}},
	{"Canada", "Canadian", []string{"Toronto", "Montreal", "Vancouver", "Ottawa"}},
	{"India", "Indian", []string{"Delhi", "Mumbai", "Chennai", "Kolkata"}},
	{"Italy", "Italian", []string{"Rome", "Milan", "Naples", "Venice"}},
	{"Kenya", "Kenyan", []string{"Nairobi", "Mombasa", "Kisumu", "Nakuru"}},
}

// noun is a countable noun (both forms) or a mass noun (plural form empty).
type noun struct{ sg, pl string }

// topic is one value of the "topic" concept with its own agents, verbs (3rd person singular, base), things and
// places; no word is shared between topics.
type topic struct {
	name   string
	agents []inflected // [singular, plural]
	verbs  []inflected // [singular "cooks", plural "cook"]
	things []noun
	places []string
}

var topics = []topic{
	{"sport",
		[]inflected{{"player", "players"}, {"runner", "runners"}, {"coach", "coaches"}, {"athlete", "athletes"}},
		[]inflected{{"kicks", "kick"}, {"wins", "win"}, {"throws", "throw"}, {"catches", "catch"}, {"scores", "score"}},
		[]noun{{"ball", "balls"}, {"match", "matches"}, {"race", "races"}, {"medal", "medals"}, {"goal", "goals"}, {"football", ""}, {"tennis", ""}},
		[]string{"stadium", "gym", "track", "arena"}},
	{"food",
		[]inflected{{"chef", "chefs"}, {"baker", "bakers"}, {"cook", "cooks"}, {"butcher", "butchers"}},
		[]inflected{{"bakes", "bake"}, {"tastes", "taste"}, {"serves", "serve"}, {"eats", "eat"}, {"fries", "fry"}},
		[]noun{{"soup", "soups"}, {"cake", "cakes"}, {"salad", "salads"}, {"pie", "pies"}, {"bread", ""}, {"pasta", ""}, {"rice", ""}},
		[]string{"kitchen", "restaurant", "bakery", "market"}},
	{"music",
		[]inflected{{"singer", "singers"}, {"pianist", "pianists"}, {"drummer", "drummers"}, {"composer", "composers"}},
		[]inflected{{"plays", "play"}, {"sings", "sing"}, {"records", "record"}, {"composes", "compose"}, {"hums", "hum"}},
		[]noun{{"song", "songs"}, {"piano", "pianos"}, {"guitar", "guitars"}, {"album", "albums"}, {"melody", "melodies"}, {"jazz", ""}, {"rhythm", ""}},
		[]string{"studio", "theater", "club", "opera"}},
	{"science",
		[]inflected{{"scientist", "scientists"}, {"chemist", "chemists"}, {"physicist", "physicists"}, {"researcher", "researchers"}},
		[]inflected{{"studies", "study"}, {"measures", "measure"}, {"tests", "test"}, {"observes", "observe"}, {"analyzes", "analyze"}},
		[]noun{{"experiment", "experiments"}, {"theory", "theories"}, {"star", "stars"}, {"cell", "cells"}, {"sample", "samples"}, {"data", ""}, {"energy", ""}},
		[]string{"laboratory", "university", "observatory", "institute"}},
	{"art",
		[]inflected{{"painter", "painters"}, {"sculptor", "sculptors"}, {"artist", "artists"}, {"potter", "potters"}},
		[]inflected{{"paints", "paint"}, {"draws", "draw"}, {"sketches", "sketch"}, {"sculpts", "sculpt"}, {"frames", "frame"}},
		[]noun{{"painting", "paintings"}, {"portrait", "portraits"}, {"sculpture", "sculptures"}, {"canvas", "canvases"}, {"vase", "vases"}, {"clay", ""}, {"charcoal", ""}},
		[]string{"gallery", "museum", "workshop", "atelier"}},
	{"farming",
		[]inflected{{"farmer", "farmers"}, {"gardener", "gardeners"}, {"shepherd", "shepherds"}, {"rancher", "ranchers"}},
		[]inflected{{"grows", "grow"}, {"harvests", "harvest"}, {"plants", "plant"}, {"feeds", "feed"}, {"waters", "water"}},
		[]noun{{"crop", "crops"}, {"tractor", "tractors"}, {"cow", "cows"}, {"apple", "apples"}, {"seed", "seeds"}, {"wheat", ""}, {"corn", ""}},
		[]string{"farm", "barn", "orchard", "meadow"}},
}

// Function words and fillers that carry no concept.
var (
	adverbs     = []string{"often", "usually", "always", "sometimes", "rarely", "gladly", "quietly", "proudly", "still", "also"}
	timePhrases = [][]string{{"on", "weekends"}, {"at", "night"}, {"after", "work"}, {"with", "friends"}}
	dayPhrases  = [][]string{{"in", "the", "morning"}, {"in", "the", "evening"}, {"every", "single", "day"}}
	longPhrases = [][]string{{"with", "a", "few", "friends"}, {"early", "in", "the", "day"}, {"late", "in", "the", "year"}}
	travelVerbs = []inflected{{"visits", "visit"}, {"leaves", "leave"}, {"loves", "love"}, {"remembers", "remember"}}
	// The copula of the introduction sentence.
	copula = inflected{"is", "are"}
)
